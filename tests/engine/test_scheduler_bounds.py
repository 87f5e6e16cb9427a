"""The stream scheduler's promises under pressure, on a fake clock: a late first token shifts its
stream, a backlog is bounded per tick and caught up slowly, a failing write ends its stream alone,
cancelled streams let go at once, lateness is counted and warned about, and jitter stays small."""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from mockserver.engine import lateness as pace
from mockserver.engine.catch_up import CATCH_UP, LATE_TOLERANCE_S, RATE_WINDOW_S
from mockserver.engine.pacing import FakeClock, Jitter, Pacer, Schedule
from mockserver.engine.scheduler import MAX_WRITE_EVENTS, StreamScheduler
from mockserver.engine.streaming import COMPLETED, FINISHED, Item, Run


class Sink:
    """Records (time, events) per write; ``cost`` seconds pass per event written."""

    def __init__(self, clock: FakeClock, cost: float = 0.0) -> None:
        self.clock = clock
        self.cost = cost
        self.writes: list[tuple[float, list[bytes]]] = []
        self.ended = False
        self.gate: asyncio.Future[None] | None = None

    async def send(self, message: dict[str, Any]) -> None:
        if not message.get("more_body"):
            self.ended = True
            return
        events = [e for e in message["body"].split(b"\n\n") if e]
        self.writes.append((self.clock.now(), events))
        self.clock.advance(self.cost * len(events))
        if self.gate is not None:
            await self.gate

    def times(self) -> list[float]:
        return [t for t, events in self.writes for _ in events]


def runs_stream(schedule: Schedule) -> Iterator[Item]:
    """Token events in runs, as Chat Completions' text: ``t<k>``."""
    pacer = Pacer(FakeClock(), schedule)
    yield schedule.due_at(0)
    yield b"t0\n\n"
    for lo, hi, dues in pacer.runs(1, schedule.total_tokens):
        yield Run(dues, [f"t{k}\n\n".encode() for k in range(lo, hi)])
    yield schedule.end
    yield b"end\n\n"


def test_a_late_first_token_shifts_the_whole_stream_and_compresses_nothing() -> None:
    async def main() -> None:
        clock = FakeClock(start=0.0)
        scheduler = StreamScheduler(clock)
        sink = Sink(clock)
        schedule = Schedule.build(start=0.0, ttft=0.0, tokens_per_second=100, total_tokens=50)
        clock.advance(0.3)  # the request took 300 ms before its stream opened
        stream = scheduler.open(runs_stream(schedule), send_body=sink.send, send_end=sink.send)
        assert await stream.done == COMPLETED
        times = sink.times()
        assert times[0] == pytest.approx(0.3)  # the first token at once
        assert [b - a for a, b in itertools.pairwise(times[:-1])] == pytest.approx([0.01] * 49)  # then at the rate
        assert times[-1] == pytest.approx(schedule.end + 0.3)
        assert scheduler.lateness.first_token.counts[pace.bisect_left(pace.BUCKETS, 0.3)] == 1

    asyncio.run(main())


def test_a_paused_readers_backlog_at_the_highest_rate_is_bounded_per_tick_and_others_go_on() -> None:
    """A 128k-token reply at 100,000 tokens/s whose client stops reading for 2 s, then reads at full
    speed, beside 20 streams at 750 tokens/s: each tick writes at most MAX_WRITE_EVENTS of its
    events, the backlog goes out no faster than CATCH_UP times its rate, and the others keep pace."""

    async def main() -> None:
        clock = FakeClock(start=0.0)
        scheduler = StreamScheduler(clock)
        hog = Sink(clock, cost=2e-7)
        hog.gate = asyncio.get_running_loop().create_future()
        big = Schedule.build(start=0.0, ttft=0.0, tokens_per_second=100_000, total_tokens=128_000)
        hog_stream = scheduler.open(runs_stream(big), send_body=hog.send, send_end=hog.send)
        paced = []
        for k in range(20):
            sink = Sink(clock, cost=1e-5)
            schedule = Schedule.build(start=k * 1e-4, ttft=0.0, tokens_per_second=750, total_tokens=3000)
            paced.append((sink, scheduler.open(runs_stream(schedule), send_body=sink.send, send_end=sink.send)))

        def resume() -> None:
            assert hog.gate is not None
            hog.gate.set_result(None)
            hog.gate = None

        async def reader() -> None:
            while clock.now() < 2.0:
                await asyncio.sleep(0)
            resume()

        await asyncio.gather(reader(), hog_stream.done, *(s.done for _, s in paced))
        assert max(len(events) for _, events in hog.writes) <= MAX_WRITE_EVENTS
        # After the pause, the backlog goes out along the catch-up line, not all at once.
        resumed = [t for t, events in hog.writes if t > 2.0 for _ in events]
        window = 20_000
        speed = [window / (b - a) for a, b in zip(resumed, resumed[window:], strict=False) if b > a]
        # CATCH_UP times the rate, plus at most one tolerance's burst per window.
        assert max(speed) <= window / (window / 100_000 / CATCH_UP - LATE_TOLERANCE_S) * 1.001
        for sink, _ in paced:
            gaps = [b - a for a, b in itertools.pairwise(sink.times()[:-1])]
            assert max(gaps) < 0.02  # the others keep their pace (1.33 ms a token)

    asyncio.run(main())


def test_a_write_that_raises_ends_that_stream_alone_with_an_error_event() -> None:
    async def main() -> None:
        clock = FakeClock(start=0.0)
        scheduler = StreamScheduler(clock)
        good = Sink(clock)
        written: list[bytes] = []

        def broken_direct_write(body: bytes) -> bool:
            if len(written) == 3:
                raise RuntimeError("a bug in the writer")
            written.append(body)
            return True

        bad_sink = Sink(clock)
        schedule = Schedule.build(start=0.0, ttft=0.0, tokens_per_second=100, total_tokens=20)
        bad = scheduler.open(
            runs_stream(schedule), send_body=bad_sink.send, send_end=bad_sink.send, write_body=broken_direct_write
        )
        other = scheduler.open(runs_stream(schedule), send_body=good.send, send_end=good.send)
        assert await bad.done == FINISHED
        assert bad_sink.ended  # the response was ended: the handler returns, the journal records it
        error = bad_sink.writes[-1][1][-1]
        assert b"server_error" in error and b"ended it" in error  # the API's error event, via the server's send
        assert await other.done == COMPLETED
        assert len(good.times()) == 21
        assert not scheduler.active

    asyncio.run(main())


def test_cancelled_streams_let_go_at_once_and_leave_the_heap() -> None:
    async def main() -> None:
        clock = FakeClock(start=0.0)
        scheduler = StreamScheduler(clock)
        sink = Sink(clock)
        closed: list[int] = []

        def waiting(k: int) -> Iterator[Item]:
            try:
                yield 600.0  # a 600 s TTFT
                yield b"never\n\n"
            finally:
                closed.append(k)

        streams = [scheduler.open(waiting(k), send_body=sink.send, send_end=sink.send) for k in range(1000)]
        assert len(scheduler._heap) == 1000
        for stream in streams:
            scheduler.cancel(stream)
        assert len(closed) == 1000
        assert len(scheduler._heap) <= 128  # rebuilt without them once they were half of it
        assert all(s.run is None and s.write_body is None for s in streams)
        assert all(next(iter(s.source), None) is None for s in streams)  # the producer is let go

    asyncio.run(main())


def test_overload_fills_the_lateness_histograms_and_warns_once_per_period(caplog: pytest.LogCaptureFixture) -> None:
    async def main() -> None:
        wakeups = itertools.count()
        # Every tenth wake-up comes 60 ms late: a loop busy with something else.
        clock = FakeClock(start=0.0, lateness=lambda: 0.06 if next(wakeups) % 10 == 5 else 0.0)
        scheduler = StreamScheduler(clock)
        sinks = [Sink(clock) for _ in range(5)]
        for sink in sinks:
            schedule = Schedule.build(start=0.0, ttft=0.0, tokens_per_second=200, total_tokens=400)
            scheduler.open(runs_stream(schedule), send_body=sink.send, send_end=sink.send)
        while scheduler.active:
            await asyncio.sleep(0)
        late = scheduler.lateness
        assert late.events.count > 0 and sum(late.events.counts[pace.bisect_left(pace.BUCKETS, 0.05) :]) > 0
        assert late.first_token.count == 5
        assert late.warnings == 1  # the run lasts about 2.5 s: one warning period
        assert scheduler.worst_lateness() > 0.05

    with caplog.at_level(logging.WARNING, logger="mockserver"):
        asyncio.run(main())
    warnings = [r.getMessage() for r in caplog.records if "ran late" in r.getMessage()]
    assert len(warnings) == 1
    assert "stream(s) ran late by up to" in warnings[0] and "--workers" in warnings[0]


def test_the_catch_up_constants_keep_their_promise() -> None:
    # With one tolerance's burst on top of a line at CATCH_UP, a run spanning RATE_WINDOW_S is 1.25x.
    assert 1.0 < CATCH_UP < 1.25
    assert pytest.approx(LATE_TOLERANCE_S / (1 / CATCH_UP - 1 / 1.25)) == RATE_WINDOW_S


def test_jitter_keeps_one_block_however_long_the_reply() -> None:
    jitter = Jitter(random.Random(7), 0.001, 128_000)
    first = [jitter[k] for k in range(200)]
    for k in range(128_000):
        jitter[k]
    assert sys.getsizeof(jitter._values) < 2_000  # one block of Jitter.BLOCK offsets, not 128k of them
    assert [jitter[k] for k in range(200)] == first  # read again, the same offsets
    assert first[0] == 0.0 and all(abs(v) <= 0.0005 for v in first)
    again = Jitter(random.Random(7), 0.001, 128_000)
    assert [again[k] for k in range(200)] == first  # seeded: reproducible
