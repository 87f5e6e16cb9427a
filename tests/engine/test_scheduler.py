"""The stream scheduler on a fake clock: one timer for every stream, one write per stream per tick,
late wake-ups that keep one event per chunk, disconnects, slow clients, drops and ending everything."""

from __future__ import annotations

import asyncio
import itertools
import math
from collections.abc import Iterator
from typing import Any

import pytest

from mockserver.engine.catch_up import CATCH_UP, LATE_TOLERANCE_S
from mockserver.engine.dialects import RESPONSES
from mockserver.engine.pacing import FakeClock, Pacer, Schedule
from mockserver.engine.scheduler import (
    ENDS_PER_TICK_S,
    MAX_OPENING_YIELD_S,
    MAX_WRITE_BYTES,
    MAX_YIELD_S,
    OPENING_S,
    OPENING_YIELD,
    StreamScheduler,
    loop_turn,
)
from mockserver.engine.streaming import CLIENT_LEFT, COMPLETED, DROP, DROPPED, FINISHED, Item


class Sink:
    """A stand-in for the server's ``send``: records (time, body) per write; can hold writes back."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.writes: list[tuple[float, bytes]] = []
        self.ended_at: float | None = None
        self.gate: asyncio.Event | None = None  # while set to an unset Event, writes wait (a paused transport)

    async def send(self, message: dict[str, Any]) -> None:
        if self.gate is not None and not self.gate.is_set():
            await self.gate.wait()
        if message.get("more_body"):
            self.writes.append((self.clock.now(), message["body"]))
        else:
            self.ended_at = self.clock.now()

    def events(self) -> list[bytes]:
        return [e + b"\n\n" for _, body in self.writes for e in body.split(b"\n\n") if e]


def token_stream(schedule: Schedule, closed: list[str] | None = None, per_chunk: int = 1) -> Iterator[Item]:
    """Events ``t<k>`` on the schedule, then ``end`` at its end, as the API producers build them."""
    pacer = Pacer(FakeClock(), schedule)
    try:
        yield b"start\n\n"
        for lo, hi, due in pacer.chunks(0, schedule.total_tokens, per_chunk):
            frame = b"t" + str(lo).encode() + b"-" + str(hi).encode() + b"\n\n"
            yield due
            yield frame
        yield schedule.end
        yield b"end\n\n"
    finally:
        if closed is not None:
            closed.append("closed")


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_every_event_goes_out_at_its_deadline_on_one_timer() -> None:
    async def main() -> None:
        clock = FakeClock(start=0.0)
        scheduler = StreamScheduler(clock)
        sinks = []
        for offset in (0.0, 0.0005):
            sink = Sink(clock)
            schedule = Schedule.build(start=offset, ttft=0.1, tokens_per_second=100, total_tokens=5)
            stream = scheduler.open(token_stream(schedule), send_body=sink.send, send_end=sink.send)
            sinks.append((sink, schedule, stream))
        for sink, schedule, stream in sinks:
            assert await stream.done == COMPLETED
            assert sink.writes[0] == (0.0, b"start\n\n")  # what is due at once goes out before open() returns
            times = [t for t, body in sink.writes[1:-1]]
            assert times == pytest.approx([schedule.due_at(k) for k in range(5)])
            assert sink.writes[-1] == (pytest.approx(schedule.end), b"end\n\n")
            assert sink.ended_at == pytest.approx(schedule.end)
        assert not scheduler.active

    run(main())


def test_a_late_wakeup_is_caught_up_no_faster_than_the_catch_up_rate() -> None:
    async def main() -> None:
        wakeups = iter(range(1000))
        clock = FakeClock(start=0.0, lateness=lambda: 0.035 if next(wakeups) == 1 else 0.0)
        scheduler = StreamScheduler(clock)
        sink = Sink(clock)
        schedule = Schedule.build(start=0.0, ttft=0.0, tokens_per_second=100, total_tokens=8)
        stream = scheduler.open(token_stream(schedule), send_body=sink.send, send_end=sink.send)
        await stream.done
        # The second wake-up (for token 2, due at 0.02) comes 35 ms late. The catch-up line starts
        # the tolerance back from then (what a late tick may send at once) and runs at CATCH_UP
        # times the rate, until it meets the schedule again.
        sent = {e: t for t, body in sink.writes for e in body.split(b"\n\n") if e.startswith(b"t")}
        line = 0.055 - LATE_TOLERANCE_S - 0.02 / CATCH_UP
        for k in range(2, 8):
            due = schedule.due_at(k)
            assert sent[f"t{k}-{k + 1}".encode()] == pytest.approx(max(0.055, due, line + due / CATCH_UP))
        assert sent[b"t1-2"] == pytest.approx(0.01)
        assert [e for e in sink.events() if e.startswith(b"t")] == [f"t{k}-{k + 1}\n\n".encode() for k in range(8)]

    run(main())


def test_tokens_per_chunk_and_time_scale_zero() -> None:
    async def main() -> None:
        clock = FakeClock(start=0.0)
        scheduler = StreamScheduler(clock)
        sink = Sink(clock)
        schedule = Schedule.build(start=0.0, ttft=0.2, tokens_per_second=100, total_tokens=10)
        await scheduler.open(token_stream(schedule, per_chunk=4), send_body=sink.send, send_end=sink.send).done
        assert [e for e in sink.events() if e.startswith(b"t")] == [b"t0-4\n\n", b"t4-8\n\n", b"t8-10\n\n"]

        instant = Sink(clock)
        schedule = Schedule.build(start=0.0, ttft=0.2, tokens_per_second=100, total_tokens=2000, time_scale=0)
        stream = scheduler.open(token_stream(schedule), send_body=instant.send, send_end=instant.send)
        assert stream.done.done()  # everything was due at once: served inside open()
        assert len(instant.writes) == 1 and instant.events() == [b"start\n\n", b"t0-2000\n\n", b"end\n\n"]

    run(main())


def test_a_client_that_leaves_is_dropped_at_once_and_its_producer_closed() -> None:
    async def main() -> None:
        clock = FakeClock(start=0.0)
        scheduler = StreamScheduler(clock)
        sink, closed = Sink(clock), []
        schedule = Schedule.build(start=0.0, ttft=0.0, tokens_per_second=10, total_tokens=100)
        stream = scheduler.open(token_stream(schedule, closed), send_body=sink.send, send_end=sink.send)
        await asyncio.sleep(0)
        written = len(sink.writes)
        scheduler.cancel(stream)
        assert closed == ["closed"] and stream.done.result() == CLIENT_LEFT and not scheduler.active
        for _ in range(5):
            await asyncio.sleep(0)
        assert len(sink.writes) == written and sink.ended_at is None

    run(main())


def test_a_client_that_stops_reading_holds_up_no_other_stream() -> None:
    async def main() -> None:
        clock = FakeClock(start=0.0)
        scheduler = StreamScheduler(clock)
        slow, fast = Sink(clock), Sink(clock)
        slow.gate = asyncio.Event()
        schedule = Schedule.build(start=0.0, ttft=0.0, tokens_per_second=100, total_tokens=20)
        slow_stream = scheduler.open(token_stream(schedule), send_body=slow.send, send_end=slow.send)
        fast_stream = scheduler.open(token_stream(schedule), send_body=fast.send, send_end=fast.send)
        assert slow_stream.blocked  # its first write is held back
        assert await fast_stream.done == COMPLETED
        assert fast.ended_at == pytest.approx(schedule.end)
        assert slow.writes == [] and not slow_stream.over  # nothing more was pulled for it meanwhile
        slow.gate.set()  # the client reads again: everything due goes out, each its own event
        assert await slow_stream.done == COMPLETED
        assert len([e for e in slow.events() if e.startswith(b"t")]) == 20

    run(main())


def test_one_write_is_bounded() -> None:
    def big() -> Iterator[Item]:
        for _ in range(10):
            yield b"x" * (MAX_WRITE_BYTES // 4)

    async def main() -> None:
        clock = FakeClock(start=0.0)
        scheduler = StreamScheduler(clock)
        sink = Sink(clock)
        await scheduler.open(big(), send_body=sink.send, send_end=sink.send).done
        assert all(len(body) <= MAX_WRITE_BYTES for _, body in sink.writes)
        assert sum(len(body) for _, body in sink.writes) == 10 * (MAX_WRITE_BYTES // 4)

    run(main())


def test_a_drop_closes_the_connection_after_the_events_before_it() -> None:
    async def main() -> None:
        clock = FakeClock(start=0.0)
        scheduler = StreamScheduler(clock)
        sink, dropped = Sink(clock), []
        stream = scheduler.open(
            iter([b"a\n\n", 1.0, b"b\n\n", DROP, b"never\n\n"]),
            send_body=sink.send,
            send_end=sink.send,
            on_drop=lambda: dropped.append(clock.now()),
        )
        assert await stream.done == DROPPED
        assert sink.events() == [b"a\n\n", b"b\n\n"] and dropped == [1.0] and sink.ended_at is None

        failing = scheduler.open(iter([DROP]), send_body=sink.send, send_end=sink.send)  # no way to close
        with pytest.raises(ConnectionAbortedError):
            await failing.done

    run(main())


def test_finish_all_ends_every_open_stream_with_a_final_event() -> None:
    async def main() -> None:
        clock = FakeClock(start=0.0)
        scheduler = StreamScheduler(clock)
        sinks, closed = [Sink(clock) for _ in range(3)], []
        schedule = Schedule.build(start=0.0, ttft=0.0, tokens_per_second=10, total_tokens=100)
        streams = [
            scheduler.open(token_stream(schedule, closed), send_body=s.send, send_end=s.send, path=f"/v1/{i}")
            for i, s in enumerate(sinks)
        ]
        ended = scheduler.finish_all(lambda stream: b"data: bye " + stream.path.encode() + b"\n\n")
        assert ended == 3 and not scheduler.active and closed == ["closed"] * 3
        for i, (sink, stream) in enumerate(zip(sinks, streams, strict=True)):
            assert stream.done.result() == FINISHED
            assert sink.events()[-1] == f"data: bye /v1/{i}\n\n".encode() and sink.ended_at == 0.0

    run(main())


def test_a_failing_producer_fails_its_stream_only() -> None:
    def broken() -> Iterator[Item]:
        yield b"a\n\n"
        yield 0.5
        raise ValueError("bug")

    async def main() -> None:
        clock = FakeClock(start=0.0)
        scheduler = StreamScheduler(clock)
        sink, other = Sink(clock), Sink(clock)
        schedule = Schedule.build(start=0.0, ttft=0.0, tokens_per_second=10, total_tokens=10)
        bad = scheduler.open(broken(), send_body=sink.send, send_end=sink.send)
        good = scheduler.open(token_stream(schedule), send_body=other.send, send_end=other.send)
        with pytest.raises(ValueError, match="bug"):
            await bad.done
        assert await good.done == COMPLETED

    run(main())


def test_end_all_sends_the_shutdown_error_of_each_api_and_ends_new_streams_at_once() -> None:
    async def main() -> None:
        clock = FakeClock(start=0.0)
        scheduler = StreamScheduler(clock)
        chat, responses, late = Sink(clock), Sink(clock), Sink(clock)
        schedule = Schedule.build(start=0.0, ttft=0.0, tokens_per_second=10, total_tokens=100)
        scheduler.open(token_stream(schedule), send_body=chat.send, send_end=chat.send)
        scheduler.open(token_stream(schedule), send_body=responses.send, send_end=responses.send, dialect=RESPONSES)
        assert len(scheduler) == 2
        assert scheduler.end_all() == 2 and len(scheduler) == 0
        assert chat.events()[-1].startswith(b'data: {"error":{') and b"server_shutting_down" in chat.events()[-1]
        # Two events went out before (start, t0-1): the error is sequence number 2.
        assert responses.events()[-1].startswith(b'event: error\ndata: {"type":"error","sequence_number":2,')
        stream = scheduler.open(token_stream(schedule), send_body=late.send, send_end=late.send)
        # While stopping, the end of each response is written by a task (it may await the shared store).
        assert await stream.done == FINISHED and b"server_shutting_down" in late.events()[-1]

    run(main())


def test_an_end_due_on_the_timer_is_written_inside_a_task() -> None:
    """Writing the end records the exchange first, which may wait on a shared store whose client
    needs a task (a Redis client's timeouts do); the timer's callback is not one. With a shared
    store (``ends_in_task``), the scheduler hands the end to a task of its own."""

    async def main() -> None:
        clock = FakeClock(start=0.0)
        scheduler = StreamScheduler(clock)
        scheduler.ends_in_task = True
        sink = Sink(clock)
        ended_in: list[asyncio.Task[Any] | None] = []

        async def send_end(message: dict[str, Any]) -> None:
            ended_in.append(asyncio.current_task())
            async with asyncio.timeout(5):  # as a Redis client does: raises outside a task
                await asyncio.sleep(0)  # the record's own wait
            await sink.send(message)

        schedule = Schedule.build(start=0.0, ttft=0.1, tokens_per_second=100, total_tokens=3)
        stream = scheduler.open(token_stream(schedule), send_body=sink.send, send_end=send_end)
        assert await stream.done == COMPLETED
        assert len(ended_in) == 1 and ended_in[0] is not None
        assert sink.ended_at == pytest.approx(schedule.end) and not scheduler.active

    run(main())


def _timed_ticks(clock: FakeClock, scheduler: StreamScheduler) -> list[tuple[float, float]]:
    """The (start, end) of each tick of ``scheduler`` from now on, on the clock."""
    ticks: list[tuple[float, float]] = []
    tick = scheduler._tick

    def timed_tick() -> None:
        started = clock.now()
        tick()
        ticks.append((started, clock.now()))

    scheduler._tick = timed_tick  # type: ignore[method-assign]
    return ticks


def _open_slow_streams(
    clock: FakeClock, scheduler: StreamScheduler, count: int, write_cost: float
) -> tuple[list[Sink], list[Any], list[Schedule]]:
    """``count`` streams of 40 tokens at 1000 tokens/s whose every write takes ``write_cost`` on the clock."""
    sinks, streams, schedules = [], [], []
    for _ in range(count):
        sink = Sink(clock)
        real_send = sink.send

        async def slow_send(message: dict[str, Any], send: Any = real_send) -> None:
            clock._now += write_cost
            await send(message)

        schedule = Schedule.build(start=clock.now(), ttft=0.01, tokens_per_second=1000, total_tokens=40)
        streams.append(scheduler.open(token_stream(schedule), send_body=slow_send, send_end=sink.send))
        sinks.append(sink)
        schedules.append(schedule)
    return sinks, streams, schedules


def _assert_every_event_in_order(sinks: list[Sink], schedules: list[Schedule], late_by: float) -> None:
    """Each stream of :func:`_open_slow_streams` got its 40 events, in order, none before its
    deadline and none more than ``late_by`` after it."""
    for sink, schedule in zip(sinks, schedules, strict=True):
        assert [e for e in sink.events() if e.startswith(b"t")] == [f"t{k}-{k + 1}\n\n".encode() for k in range(40)]
        written = [t for t, body in sink.writes for e in body.split(b"\n\n") if e.startswith(b"t")]
        due = [schedule.due_at(k) for k in range(40)]
        assert all(d - 1e-9 <= t <= d + late_by for t, d in zip(written, due, strict=True))


def test_a_long_tick_leaves_the_loop_as_long_before_the_next() -> None:
    """A tick that takes a while (many streams due, slow writes) is followed by at least as long
    for the loop's other work (new requests, reads) before the next tick, up to MAX_YIELD_S. What
    falls due meanwhile goes out in the next tick, each event on its own, none before its deadline."""

    async def main() -> None:
        clock = FakeClock(start=0.0)
        scheduler = StreamScheduler(clock)
        ticks = _timed_ticks(clock, scheduler)
        sinks, streams, schedules = _open_slow_streams(clock, scheduler, 12, write_cost=0.0005)
        for stream in streams:
            assert await stream.done == COMPLETED
        busy = [(start, end) for start, end in ticks if end - start > 0]
        assert len(busy) > 3
        for (start, end), (next_start, _) in itertools.pairwise(ticks):
            assert next_start >= end + min(end - start, MAX_YIELD_S) - 1e-9
        # 12 writes of 0.5 ms: ticks of about 6 ms, longer than the most the loop is given between them.
        assert max(end - start for start, end in busy) >= MAX_YIELD_S
        _assert_every_event_in_order(sinks, schedules, late_by=math.inf)
        # Fewer writes than events: what fell due while the loop had its turn shares one write.
        assert sum(len(sink.writes) for sink in sinks) < 12 * 42

    run(main())


@pytest.mark.parametrize("took_ms", [0.0, 0.01, 0.2, 1.0, 2.0, 2.5, 3.5, 5.0, 6.5, 7.5, 8.0, 12.0, 40.0])
def test_the_loops_turn_while_streams_open_keeps_every_event_within_the_late_tolerance(took_ms: float) -> None:
    """While streams are opening, the loop's turn after a tick is OPENING_YIELD times the tick, up to
    MAX_OPENING_YIELD_S, and no longer than keeps an event due as the tick began within the late
    tolerance (the rest of that tick, the turn, its place in the next tick); never less than the usual
    turn, which is the tick's length up to MAX_YIELD_S."""
    took = took_ms / 1000
    usual = loop_turn(took, opening=False)
    assert usual == min(took, MAX_YIELD_S)
    turn = loop_turn(took, opening=True)
    assert usual <= turn <= max(usual, MAX_OPENING_YIELD_S)
    assert turn <= max(usual, OPENING_YIELD * took)
    assert turn == usual or turn + 2 * took <= LATE_TOLERANCE_S + 1e-12
    expected = {0.2: 0.0008, 1.0: 0.004, 2.0: 0.008, 2.5: 0.008, 3.5: 0.008, 5.0: 0.005, 6.5: 0.002, 7.5: 0.001}
    if took_ms in expected:  # the factor binds, then the cap, then the tolerance, then the usual turn
        assert turn == pytest.approx(expected[took_ms])


def test_while_streams_open_a_long_tick_leaves_the_loop_longer() -> None:
    """While streams are opening (one opened within OPENING_S), a tick that took d leaves the loop
    OPENING_YIELD * d, up to MAX_OPENING_YIELD_S, so a burst of new requests reaches its first tokens
    sooner; OPENING_S after the last opened, d again, up to MAX_YIELD_S. The running streams' events
    wait within the late tolerance, so none is held to the catch-up line, and none goes out early."""

    async def main() -> None:
        clock = FakeClock(start=0.0)
        scheduler = StreamScheduler(clock)
        ticks = _timed_ticks(clock, scheduler)
        # Ticks of 0.4 ms (8 writes of 0.05 ms): 1.6 ms for the loop while opening, 0.4 ms after.
        sinks, streams, schedules = _open_slow_streams(clock, scheduler, 8, write_cost=0.00005)
        for stream in streams:
            assert await stream.done == COMPLETED
        opening = after = 0  # busy ticks seen while streams were opening, and after
        for (start, end), (next_start, _) in itertools.pairwise(ticks):
            took = end - start
            if took < 0.0003:  # not every stream was due: its turn is not the point here
                continue
            turn = next_start - end
            if end < OPENING_S:
                assert turn >= loop_turn(took, opening=True) - 1e-9
                opening += 1
            else:
                assert loop_turn(took, opening=False) - 1e-9 <= turn < OPENING_YIELD * took
                after += 1
        assert opening and after
        _assert_every_event_in_order(sinks, schedules, late_by=LATE_TOLERANCE_S)

    run(main())


def test_replies_end_after_every_due_event_of_the_tick_a_few_at_a_time() -> None:
    """Ending a reply (the journal, the ledger, the metrics, closing the connection) costs far more
    than an event. Streams that finish in a tick end after every other stream's due events in it,
    for at most ENDS_PER_TICK_S per tick; the rest end at the next tick. Nothing is lost or reordered
    within a stream, and a stream whose last events are out ends COMPLETED even when the server
    stops meanwhile."""

    async def main() -> None:
        end_cost = 0.0006
        clock = FakeClock(start=0.0)
        scheduler = StreamScheduler(clock)
        log: list[tuple[str, float]] = []

        def recorder(name: str) -> tuple[Any, Any]:
            async def send_body(message: dict[str, Any]) -> None:
                log.append((f"{name} event", clock.now()))

            async def send_end(message: dict[str, Any]) -> None:
                clock._now += end_cost  # ending a reply takes a while
                log.append((f"{name} end", clock.now()))

            return send_body, send_end

        finishing = []
        for k in range(5):  # five short streams whose last events fall due together
            body, end = recorder(f"short{k}")
            schedule = Schedule.build(start=0.0, ttft=0.01, tokens_per_second=1000, total_tokens=3)
            finishing.append(scheduler.open(token_stream(schedule), send_body=body, send_end=end))
        body, end = recorder("long")
        long_schedule = Schedule.build(start=0.0, ttft=0.01, tokens_per_second=1000, total_tokens=30)
        longer = scheduler.open(token_stream(long_schedule), send_body=body, send_end=end)
        for stream in [*finishing, longer]:
            assert await stream.done == COMPLETED
        ends = [when for what, when in log if what.startswith("short") and what.endswith("end")]
        assert len(ends) == 5
        # The long stream's event due with the short streams' last ones went out before any of them ended.
        first_end = min(ends)
        long_events = [when for what, when in log if what == "long event"]
        assert any(when < first_end for when in long_events)
        position = {what: i for i, (what, _) in enumerate(log)}
        due_with_them = max(i for i, (what, when) in enumerate(log) if what == "long event" and when < first_end)
        assert all(position[f"short{k} end"] > due_with_them for k in range(5))
        # At most ENDS_PER_TICK_S of ends per tick (0.6 ms each: the second crosses 1 ms), so
        # the five end two, two and one per tick; ends in one tick follow each other by end_cost.
        groups = [[ends[0]]]
        for before, after in itertools.pairwise(sorted(ends)):
            if after - before <= end_cost + 1e-9:
                groups[-1].append(after)
            else:
                groups.append([after])
        assert [len(group) for group in groups] == [2, 2, 1]
        assert end_cost < ENDS_PER_TICK_S < 2 * end_cost
        assert not scheduler.active

    run(main())


def waiting_to_end() -> tuple[StreamScheduler, Sink, Any]:
    """A stream whose every event is out and whose end waits behind a tick's events (see _tick)."""
    clock = FakeClock(start=0.0)
    scheduler = StreamScheduler(clock)
    sink = Sink(clock)
    schedule = Schedule.build(start=0.0, ttft=0.01, tokens_per_second=1000, total_tokens=2)
    stream = scheduler.open(token_stream(schedule), send_body=sink.send, send_end=sink.send)
    scheduler._ticking = True  # as in a tick
    scheduler._advance(stream, schedule.due_at(0))  # its first token, on time: anchored where it is
    scheduler._advance(stream, schedule.end)
    scheduler._ticking = False
    return scheduler, sink, stream


def test_a_stream_waiting_to_end_is_not_sent_the_shutdown_event() -> None:
    async def main() -> None:
        scheduler, sink, stream = waiting_to_end()
        assert stream.ending
        assert scheduler.end_all() == 1
        assert await stream.done == COMPLETED  # ended as it would have, with nothing after its last event
        assert sink.events()[-1] == b"end\n\n"

    run(main())


def test_a_client_that_leaves_while_its_end_waits_gets_a_completed_reply() -> None:
    """A stream whose every event is out, waiting behind the tick's events for its end, is a whole
    reply: if its client leaves meanwhile (it had ``[DONE]``), it ends COMPLETED, with its end
    written through the observers (the journal, the ledger) rather than recorded as a disconnect."""

    async def main() -> None:
        scheduler, sink, stream = waiting_to_end()
        assert stream.ending and sink.ended_at is None
        scheduler.cancel(stream)  # the watcher saw the client go
        assert await stream.done == COMPLETED
        assert sink.ended_at is not None and sink.events()[-1] == b"end\n\n"
        assert not scheduler.active
        scheduler._tick()  # the queued end finds the stream over: nothing happens twice
        assert await stream.done == COMPLETED

    run(main())
