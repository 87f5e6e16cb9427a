"""A property test of the delivery the server really uses: the stream scheduler playing the items of
``Pacer.chunks()`` and ``Pacer.runs()`` (as the API families' producers build them) on a fake clock.

Whatever the tick timing, the lateness of each wake-up, the cost of a write and the writes a
paused client holds back, every event goes out once, in order, never before its deadline, and
over any 50 events (and at least RATE_WINDOW_S of its schedule: 113 events at 750 tokens/s) a stream
goes at most 1.25 times as fast as its deadlines ask."""

from __future__ import annotations

import asyncio
import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockserver.engine.catch_up import RATE_WINDOW_S
from mockserver.engine.pacing import MAX_TTFT_S, FakeClock, Pacer, Schedule
from mockserver.engine.scheduler import StreamScheduler
from mockserver.engine.streaming import COMPLETED, Item, Run

WINDOW = 50  # events
MOST_SPEED = 1.25  # times the stream's rate, over any WINDOW events


@dataclass(frozen=True)
class Plan:
    rate: float
    ttft: float
    tokens: int
    per_chunk: int
    jitter: float
    runs: bool  # as Chat Completions' text (runs of deadlines), or chunk by chunk (Responses, Anthropic)
    opens_at: float
    direct: bool  # the server's direct write, falling back to send when it is held back


def frame(lo: int, hi: int) -> bytes:
    return f"t{lo}-{hi}\n\n".encode()


def items(pacer: Pacer, plan: Plan, expected: list[tuple[bytes, float]]) -> Iterator[Item]:
    """The stream as the producers build it; ``expected`` gets each token frame and its deadline."""
    schedule, stop, per = pacer.schedule, plan.tokens, plan.per_chunk
    yield b"start\n\n"
    if not plan.runs:
        for lo, hi, due in pacer.chunks(0, stop, per):
            expected.append((frame(lo, hi), due))
            yield due
            yield frame(lo, hi)
    else:  # the first chunk alone, the next deadline, then runs (engine/... chat's stream_chunks)
        alone = min(stop, per)
        for lo, hi, due in pacer.chunks(0, alone, per):
            expected.append((frame(lo, hi), due))
            yield due
            yield frame(lo, hi)
        if alone < stop:
            yield pacer.token_due(min(alone + per, stop) - 1)
        for lo, hi, dues in pacer.runs(alone, stop, per):
            frames = [frame(k, min(k + per, hi)) for k in range(lo, hi, per)]
            expected.extend(zip(frames, dues, strict=True))
            yield Run(dues, frames)
    yield schedule.end
    yield b"end\n\n"


class Client:
    """Records each event with when the server handed it over; may hold writes back for a while."""

    def __init__(self, clock: FakeClock, holds: Iterator[float], cost: Iterator[float]) -> None:
        self.clock = clock
        self.holds = holds
        self.cost = cost
        self.events: list[tuple[float, bytes]] = []
        self.ended = False

    def record(self, body: bytes) -> None:
        now = self.clock.now()
        self.events.extend((now, e + b"\n\n") for e in body.split(b"\n\n") if e)
        self.clock.advance(next(self.cost))  # a write takes a while: the tick runs long

    def direct(self, body: bytes) -> bool:
        if next(self.holds) > 0:
            return False  # the transport is paused: the server's send takes it
        self.record(body)
        return True

    async def send(self, message: dict[str, Any]) -> None:
        if not message.get("more_body"):
            self.ended = True
            return
        self.record(message["body"])
        hold = next(self.holds)
        if hold > 0:  # the client stops reading for a while: the write is held back that long
            loop = asyncio.get_running_loop()
            resumed = loop.create_future()

            def resume() -> None:
                self.clock.advance(hold)
                resumed.set_result(None)

            loop.call_soon(resume)
            await resumed


plans = st.builds(
    Plan,
    rate=st.floats(5, 2000),
    ttft=st.sampled_from([0.0, 0.0004, 0.02, 0.2]),
    tokens=st.integers(1, 60) | st.integers(120, 400),  # long enough for windows of 50 events
    per_chunk=st.integers(1, 3),
    jitter=st.sampled_from([0.0, 0.3, 0.9]),
    runs=st.booleans(),
    opens_at=st.floats(0, 0.05),
    direct=st.booleans(),
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    streams=st.lists(plans, min_size=1, max_size=3),
    # Mostly on time, now and then late: a late wake-up among punctual ones is what tempts a catch-up.
    lateness=st.lists(st.sampled_from([0.0] * 8 + [0.0003, 0.002, 0.004, 0.008, 0.03, 0.4]), min_size=1, max_size=40),
    costs=st.lists(st.sampled_from([0.0, 0.0, 0.0001, 0.001, 0.005]), min_size=1, max_size=10),
    holds=st.lists(st.sampled_from([0.0, 0.0, 0.0, 0.0, 0.01, 0.3]), min_size=1, max_size=10),
    late_open=st.sampled_from([0.0, 0.001, 0.05, 0.5]),
)
def test_every_event_once_in_order_never_early_and_never_much_faster_than_the_rate(
    streams: list[Plan], lateness: list[float], costs: list[float], holds: list[float], late_open: float
) -> None:
    async def main() -> None:
        wakeups = iter(lateness)  # then on time: a catch-up has room to show its speed
        clock = FakeClock(start=0.0, lateness=lambda: next(wakeups, 0.0))
        scheduler = StreamScheduler(clock)
        played = []
        for index, plan in enumerate(streams):
            schedule = Schedule.build(
                start=plan.opens_at,
                ttft=plan.ttft,
                tokens_per_second=plan.rate,
                total_tokens=plan.tokens,
                jitter=plan.jitter,
            )
            expected: list[tuple[bytes, float]] = []
            source = items(Pacer(clock, schedule), plan, expected)
            client = Client(clock, itertools.chain(holds[index:], itertools.repeat(0.0)), itertools.cycle(costs))
            if plan.opens_at + late_open > clock.now():  # the request took this long before its stream opened
                clock.advance(plan.opens_at + late_open - clock.now())
            stream = scheduler.open(
                source,
                send_body=client.send,
                send_end=client.send,
                write_body=client.direct if plan.direct else None,
            )
            played.append((plan, schedule, expected, client, stream))
        for _, schedule, expected, client, stream in played:
            assert await stream.done == COMPLETED
            assert client.ended
            sent = [event for _, event in client.events]
            assert sent == [b"start\n\n", *[f for f, _ in expected], b"end\n\n"]  # each once, in order
            tokens = client.events[1:-1]
            for (when, _), (_, due) in zip(tokens, expected, strict=True):
                assert when >= due - 1e-9  # never before its deadline
            assert client.events[-1][0] >= schedule.end - 1e-9
            # Against the deadlines' own span (which the seeded jitter varies a little).
            dues = [due for _, due in expected]
            last = 0
            for first, (start, _) in enumerate(tokens):
                last = max(last, first + WINDOW - 1)
                while last < len(dues) and dues[last] - dues[first] < RATE_WINDOW_S:
                    last += 1
                if last >= len(dues):
                    break
                assert tokens[last][0] - start >= (dues[last] - dues[first]) / MOST_SPEED - 1e-9
        assert not scheduler.active

    asyncio.run(main())


@given(
    rate=st.floats(0, 1e12, allow_nan=False) | st.sampled_from([1e-310, 5e-324, math.inf]),
    ttft=st.floats(0, 600) | st.just(math.inf),  # a TTFT from a prefill at a vanishing rate
    tokens=st.integers(1, 128_000),
    jitter=st.floats(0, 0.99),
    time_scale=st.sampled_from([0.0, 0.001, 1.0, 10.0]),
)
def test_no_deadline_is_nan_or_infinite_whatever_the_rate(
    rate: float, ttft: float, tokens: int, jitter: float, time_scale: float
) -> None:
    """A rate outside the documented range never reaches the schedule from a request (a 400), and the
    schedule clamps one that would anyway: every deadline is a finite number, the first no earlier
    than the TTFT."""
    if rate == 0 or rate == math.inf:
        rate = 5e-324 if rate == 0 else 1e300
    schedule = Schedule.build(
        start=5.0, ttft=ttft, tokens_per_second=rate, total_tokens=tokens, jitter=jitter, time_scale=time_scale
    )
    pacer = Pacer(FakeClock(), schedule)
    picked = {0, 1, tokens // 2, tokens - 1}
    for k in picked:
        assert math.isfinite(schedule.due_at(k))
    assert schedule.due_at(0) >= 5.0 + min(ttft, MAX_TTFT_S) * time_scale - 1e-9
    assert math.isfinite(schedule.end)
    for _, _, dues in itertools.islice(pacer.runs(0, tokens), 3):
        assert all(math.isfinite(d) for d in dues)
