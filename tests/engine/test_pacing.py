"""The pacing schedule, checked on a fake clock: no test here sleeps."""

from __future__ import annotations

import asyncio
import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockserver.engine.pacing import FakeClock, Pacer, Schedule


def run_stream(schedule: Schedule, clock: FakeClock, per_chunk: int = 1) -> list[tuple[float, int]]:
    """Drive a pacer to the end; return (send time, tokens sent so far) for each chunk."""
    pacer = Pacer(clock, schedule)
    sent: list[tuple[float, int]] = []

    async def drive() -> None:
        async for _lo, hi in pacer.batches(0, schedule.total_tokens, per_chunk):
            sent.append((clock.now(), hi))
        await pacer.wait_for_end()

    asyncio.run(drive())
    return sent


def test_first_token_waits_for_ttft_then_tokens_follow_at_the_rate() -> None:
    clock = FakeClock(start=100.0)
    schedule = Schedule.build(start=100.0, ttft=0.5, tokens_per_second=10, total_tokens=5)
    sent = run_stream(schedule, clock)
    assert [t for t, _ in sent] == pytest.approx([100.5, 100.6, 100.7, 100.8, 100.9])
    assert [n for _, n in sent] == [1, 2, 3, 4, 5]
    assert clock.now() == pytest.approx(101.0)  # ttft + n / rate


def test_a_late_wakeup_merges_every_due_token_into_one_chunk() -> None:
    late = iter([0.0, 0.35] + [0.0] * 20)
    clock = FakeClock(start=0.0, lateness=lambda: next(late))
    schedule = Schedule.build(start=0.0, ttft=0.0, tokens_per_second=10, total_tokens=8)
    sent = run_stream(schedule, clock)
    counts = [n for _, n in sent]
    # Token 0 is due at once; the wake-up for token 2 lands 0.35 s late, at 0.55 s, when
    # tokens 0-5 are due: four arrive together.
    assert counts[:3] == [1, 2, 6]
    assert counts[-1] == 8
    assert clock.now() == pytest.approx(0.8)


def test_tokens_per_chunk_groups_tokens_without_changing_the_end() -> None:
    clock = FakeClock(start=0.0)
    schedule = Schedule.build(start=0.0, ttft=0.2, tokens_per_second=100, total_tokens=10)
    sent = run_stream(schedule, clock, per_chunk=4)
    assert [n for _, n in sent] == [4, 8, 10]
    assert clock.now() == pytest.approx(0.3)


def test_time_scale_zero_makes_everything_due_at_once() -> None:
    clock = FakeClock(start=5.0)
    schedule = Schedule.build(start=5.0, ttft=3.0, tokens_per_second=54, total_tokens=100, time_scale=0)
    sent = run_stream(schedule, clock)
    assert sent == [(5.0, 100)]
    assert clock.wakeups == []


def test_time_scale_stretches_ttft_and_interval() -> None:
    schedule = Schedule.build(start=0.0, ttft=1.0, tokens_per_second=10, total_tokens=10, time_scale=0.5)
    assert schedule.first_token_at == pytest.approx(0.5)
    assert schedule.end == pytest.approx(1.0)


@settings(max_examples=200, deadline=None)
@given(
    rate=st.floats(min_value=1, max_value=5000),
    n=st.integers(min_value=1, max_value=400),
    ttft=st.floats(min_value=0, max_value=5),
    jitter=st.floats(min_value=0, max_value=0.99),
    per_chunk=st.integers(min_value=1, max_value=8),
    seed=st.integers(min_value=0, max_value=2**32),
    max_lateness=st.floats(min_value=0, max_value=0.05),
)
def test_never_ahead_of_schedule_and_total_time_is_n_over_rate(
    rate: float, n: int, ttft: float, jitter: float, per_chunk: int, seed: int, max_lateness: float
) -> None:
    noise = random.Random(seed)
    clock = FakeClock(start=0.0, lateness=lambda: noise.random() * max_lateness)
    schedule = Schedule.build(
        start=0.0, ttft=ttft, tokens_per_second=rate, total_tokens=n, jitter=jitter, rng=random.Random(seed)
    )
    sent = run_stream(schedule, clock, per_chunk)

    for when, total in sent:
        # Never ahead: every token sent by `when` was already due.
        assert total <= schedule.due_count(when)
        # Never further behind than the chunk size, unless the loop itself was late.
        assert when >= schedule.first_token_at
    assert sent[-1][1] == n
    # Token counts only rise.
    assert all(a[1] < b[1] for a, b in itertools.pairwise(sent))
    # The schedule's length is exactly ttft + n / rate, whatever the jitter.
    assert schedule.end - schedule.start == pytest.approx(ttft + n / rate, rel=1e-9, abs=1e-9)
    deadlines = [schedule.due_at(k) for k in range(n)]
    assert deadlines[0] == pytest.approx(ttft)
    assert all(a < b for a, b in itertools.pairwise(deadlines))
    assert deadlines[-1] < schedule.end


def test_a_shifted_schedule_moves_every_deadline_by_the_same_amount() -> None:
    """A reply that waited for a capacity slot keeps its plan, moved later by the wait."""
    schedule = Schedule.build(start=10.0, ttft=0.2, tokens_per_second=750, total_tokens=300, jitter=0.5, rng=7)
    later = schedule.shifted(1.5)
    assert later.start == 11.5
    assert later.first_token_at == pytest.approx(schedule.first_token_at + 1.5)
    assert later.end == pytest.approx(schedule.end + 1.5)
    assert all(later.due_at(k) == pytest.approx(schedule.due_at(k) + 1.5) for k in range(300))


def test_jitter_seeded_by_the_request_is_the_same_for_the_same_seed_and_leaves_the_first_token_alone() -> None:
    def build(seed: int) -> Schedule:
        return Schedule.build(start=0.0, ttft=0.2, tokens_per_second=100, total_tokens=200, jitter=0.5, rng=seed)

    first, again, other = build(42), build(42), build(43)
    assert [first.due_at(k) for k in range(200)] == [again.due_at(k) for k in range(200)]
    assert [first.due_at(k) for k in range(200)] != [other.due_at(k) for k in range(200)]
    assert first.due_at(0) == first.first_token_at  # the first token waits the full TTFT
    assert all(first.due_at(k) < first.due_at(k + 1) for k in range(199))
