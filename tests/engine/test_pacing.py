"""The pacing schedule, checked on a fake clock: no test here sleeps."""

from __future__ import annotations

import asyncio
import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockserver.engine.pacing import FakeClock, Pacer, Schedule


def chunk_deadlines(schedule: Schedule, per_chunk: int = 1) -> list[tuple[float, int]]:
    """The stream's chunks as the server plans them: (when it is due, tokens sent once it is out)."""
    return [(due, hi) for _lo, hi, due in Pacer(FakeClock(), schedule).chunks(0, schedule.total_tokens, per_chunk)]


def test_first_token_waits_for_ttft_then_tokens_follow_at_the_rate() -> None:
    schedule = Schedule.build(start=100.0, ttft=0.5, tokens_per_second=10, total_tokens=5)
    sent = chunk_deadlines(schedule)
    assert [t for t, _ in sent] == pytest.approx([100.5, 100.6, 100.7, 100.8, 100.9])
    assert [n for _, n in sent] == [1, 2, 3, 4, 5]
    assert schedule.end == pytest.approx(101.0)  # ttft + n / rate


def test_a_whole_reply_waits_until_the_schedule_ends() -> None:
    clock = FakeClock(start=100.0)
    schedule = Schedule.build(start=100.0, ttft=0.5, tokens_per_second=10, total_tokens=5)
    asyncio.run(Pacer(clock, schedule).wait_for_end())
    assert clock.now() == pytest.approx(101.0)  # as long as the stream of the same reply


def test_tokens_per_chunk_groups_tokens_without_changing_the_end() -> None:
    schedule = Schedule.build(start=0.0, ttft=0.2, tokens_per_second=100, total_tokens=10)
    sent = chunk_deadlines(schedule, per_chunk=4)
    assert [n for _, n in sent] == [4, 8, 10]
    assert [t for t, _ in sent] == pytest.approx([0.23, 0.27, 0.29])  # each chunk is due with its last token
    assert schedule.end == pytest.approx(0.3)


def test_time_scale_zero_makes_everything_due_at_once() -> None:
    schedule = Schedule.build(start=5.0, ttft=3.0, tokens_per_second=54, total_tokens=100, time_scale=0)
    assert chunk_deadlines(schedule) == [(5.0, 100)]  # one chunk, due at the start
    assert schedule.end == 5.0


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
)
def test_never_ahead_of_schedule_and_total_time_is_n_over_rate(
    rate: float, n: int, ttft: float, jitter: float, per_chunk: int, seed: int
) -> None:
    schedule = Schedule.build(
        start=0.0, ttft=ttft, tokens_per_second=rate, total_tokens=n, jitter=jitter, rng=random.Random(seed)
    )
    chunks = list(Pacer(FakeClock(), schedule).chunks(0, n, per_chunk))

    # Every token, once, in order, in chunks of per_chunk (the last maybe fewer).
    assert [lo for lo, _, _ in chunks] == list(range(0, n, per_chunk))
    assert [hi for _, hi, _ in chunks] == [min(lo + per_chunk, n) for lo in range(0, n, per_chunk)]
    for lo, hi, due in chunks:
        # Never ahead: a chunk is due once its last token is, so every token in it is due by then.
        assert due == schedule.due_at(hi - 1)
        assert all(schedule.due_at(k) <= due for k in range(lo, hi))
        assert due >= schedule.first_token_at
    # Deadlines only rise.
    assert all(a[2] < b[2] for a, b in itertools.pairwise(chunks))
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
