"""Runs of events (the per-token hot path) give exactly the events, deadlines and writes that
one item per event gives; and a request is dated from when the kernel received it."""

from __future__ import annotations

import asyncio
import random
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

from mockserver.api.asgi import arrival
from mockserver.api.openai.chat.completions import ChatChoice, ChatPlan, stream_chunks
from mockserver.engine.generation import Text, TextGenerator
from mockserver.engine.pacing import FIRST_RUN_CHUNKS, RUN_CHUNKS, FakeClock, MonotonicClock, Pacer, Schedule
from mockserver.engine.scheduler import MAX_WRITE_BYTES, StreamScheduler
from mockserver.engine.streaming import COMPLETED, Item, Run
from mockserver.harness.faults.midstream import FaultPacer


class Sink:
    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.writes: list[tuple[float, bytes]] = []

    async def send(self, message: dict[str, Any]) -> None:
        if message.get("more_body"):
            self.writes.append((self.clock.now(), message["body"]))


def flat(items: Iterator[Item]) -> list[bytes | float]:
    """The items with every run spelled out as deadline, frame, deadline, frame..., and of two
    deadlines in a row only the later (what the scheduler waits for: nothing comes between)."""
    out: list[bytes | float] = []
    for item in items:
        for one in item.items() if isinstance(item, Run) else [item]:
            assert isinstance(one, bytes | float)
            if isinstance(one, float) and out and isinstance(out[-1], float):
                assert one >= out[-1]
                out.pop()
            out.append(one)
    return out


def jittered(total: int, start: float = 10.0) -> Schedule:
    return Schedule.build(
        start=start, ttft=0.2, tokens_per_second=750, total_tokens=total, jitter=0.5, rng=random.Random(7)
    )


@pytest.mark.parametrize("per_chunk", [1, 3, 4])
@pytest.mark.parametrize("total", [1, 17, 200])
def test_runs_give_the_deadlines_chunks_give(per_chunk: int, total: int) -> None:
    for schedule in (jittered(total), Schedule.build(start=1.0, ttft=0.0, tokens_per_second=54, total_tokens=total)):
        chunks = list(Pacer(FakeClock(), schedule).chunks(1, total, per_chunk))
        runs = list(Pacer(FakeClock(), schedule).runs(1, total, per_chunk))
        assert [due for _, _, due in chunks] == [due for _, _, dues in runs for due in dues]  # exactly equal
        assert [lo for lo, _, _ in runs] == [1, *[hi for _, hi, _ in runs][:-1]][: len(runs)]  # contiguous
        assert all(len(dues) == -(-(hi - lo) // per_chunk) for lo, hi, dues in runs)


def chat_plan(length: int, schedule: Schedule, text: Text | None = None) -> ChatPlan:
    text = text if text is not None else TextGenerator().generate(1234, length)
    choice = ChatChoice(0, text, "stop")
    return ChatPlan("chatcmpl-1", 1, "gpt-5.6-sol", "default", "fp_1", 5, (choice,), True, schedule)


@pytest.mark.parametrize("per_chunk", [1, 4])
def test_a_chat_stream_in_runs_is_the_same_stream(per_chunk: int) -> None:
    schedule = jittered(300)
    in_runs = list(stream_chunks(chat_plan(300, schedule), Pacer(FakeClock(), schedule), per_chunk=per_chunk))
    one_by_one = list(stream_chunks(chat_plan(300, schedule), FaultPacer(FakeClock(), schedule), per_chunk=per_chunk))
    assert any(isinstance(item, Run) for item in in_runs)
    assert not any(isinstance(item, Run) for item in one_by_one)  # a pacer a fault can move: item by item
    assert flat(iter(in_runs)) == flat(iter(one_by_one))


def test_tokens_that_are_part_of_a_character_send_nothing_in_runs_too() -> None:
    schedule = jittered(60)
    text = Text(["", "字", "a", "", "", "文", *["b"] * 54])
    in_runs = flat(stream_chunks(chat_plan(60, schedule, text), Pacer(FakeClock(), schedule), per_chunk=1))
    one_by_one = list(stream_chunks(chat_plan(60, schedule, text), FaultPacer(FakeClock(), schedule), per_chunk=1))
    assert in_runs == flat(iter(one_by_one))
    assert sum(b'"content":"' in item for item in in_runs if isinstance(item, bytes)) == 58  # 57 pieces + the opening


def test_the_scheduler_plays_a_run_as_it_plays_items_late_wakeups_included() -> None:
    async def play(items: list[Item]) -> list[tuple[float, bytes]]:
        wakeups = iter(range(1000))
        clock = FakeClock(start=0.0, lateness=lambda: 0.013 if next(wakeups) % 7 == 3 else 0.0)
        scheduler = StreamScheduler(clock)
        sink = Sink(clock)
        assert await scheduler.open(iter(items), send_body=sink.send, send_end=sink.send).done == COMPLETED
        return sink.writes

    dues = [0.01 * k for k in range(1, 60)]
    frames = [b"e%d\n\n" % k for k in range(1, 60)]
    as_items: list[Item] = [b"start\n\n", *[x for pair in zip(dues, frames, strict=True) for x in pair], b"end\n\n"]
    runs = [Run(dues[:20], frames[:20]), Run([], []), Run(dues[20:], frames[20:])]
    as_runs: list[Item] = [b"start\n\n", *runs, b"end\n\n"]
    writes = asyncio.run(play(as_items))
    assert asyncio.run(play(as_runs)) == writes
    assert any(body.count(b"\n\n") > 1 for _, body in writes)  # late wake-ups: several events in one write


def test_direct_writes_give_the_same_writes_and_fall_back_to_send_when_refused() -> None:
    """With the server's direct write (as under uvicorn), a run's events take the tick's short
    path; a refused direct write (a paused transport) goes through ``send`` instead."""

    async def play(items: list[Item], refuse_every: int | None) -> list[tuple[float, bytes]]:
        wakeups = iter(range(1000))
        clock = FakeClock(start=0.0, lateness=lambda: 0.013 if next(wakeups) % 7 == 3 else 0.0)
        scheduler = StreamScheduler(clock)
        sink = Sink(clock)
        calls = iter(range(10_000))

        def write(body: bytes) -> bool:
            if refuse_every is not None and next(calls) % refuse_every == 0:
                return False
            sink.writes.append((clock.now(), body))
            return True

        stream = scheduler.open(iter(items), send_body=sink.send, send_end=sink.send, write_body=write)
        assert await stream.done == COMPLETED
        return sink.writes

    dues = [0.01 * k for k in range(1, 80)]
    frames = [b"e%d\n\n" % k for k in range(1, 80)]
    as_items: list[Item] = [b"start\n\n", *[x for pair in zip(dues, frames, strict=True) for x in pair], b"end\n\n"]
    as_runs: list[Item] = [b"start\n\n", Run(dues[:30], frames[:30]), Run(dues[30:], frames[30:]), b"end\n\n"]
    expected = asyncio.run(play(as_items, None))
    assert asyncio.run(play(as_runs, None)) == expected
    assert asyncio.run(play(as_runs, 3)) == expected


def test_one_write_from_a_run_is_bounded() -> None:
    async def main() -> list[tuple[float, bytes]]:
        clock = FakeClock(start=0.0)
        scheduler = StreamScheduler(clock)
        sink = Sink(clock)
        frames = [b"x" * (MAX_WRITE_BYTES // 4)] * 10
        await scheduler.open(iter([Run([0.0] * 10, frames)]), send_body=sink.send, send_end=sink.send).done
        return sink.writes

    writes = asyncio.run(main())
    assert all(len(body) <= MAX_WRITE_BYTES for _, body in writes)
    assert sum(len(body) for _, body in writes) == 10 * (MAX_WRITE_BYTES // 4)


def test_a_request_is_dated_from_when_the_kernel_received_it() -> None:
    async def main() -> float:
        waited: list[float] = []

        class Server(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                self.transport = transport

            def data_received(self, data: bytes) -> None:
                time.sleep(0.05)  # the loop is busy: the request waits in the kernel meanwhile
                waited.append(arrival.kernel_wait(self.transport))
                self.transport.close()

        server = await asyncio.get_running_loop().create_server(Server, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"request")
        await reader.read()
        writer.close()
        server.close()
        return waited[0]

    waited = asyncio.run(main())
    if not hasattr(socket, "TCP_INFO"):
        assert waited == 0.0
        return
    assert 0.035 <= waited <= 0.5  # at the kernel's tick resolution (1 to 10 ms)
    scope = {"state": {arrival.WAITED: waited}}
    clock = MonotonicClock()
    before = clock.now()
    assert before - waited - 0.01 <= arrival.arrival_time(scope, clock) <= clock.now() - waited
    fake = FakeClock(start=5.0)
    assert arrival.arrival_time(scope, fake) == 5.0  # a test's clock is not moved by real waits
    assert arrival.kernel_wait(None) == 0.0 and arrival.kernel_wait(object()) == 0.0


def test_a_request_that_came_while_the_server_was_starting_waited_from_when_it_was_ready() -> None:
    async def main() -> tuple[float, float]:
        waited: list[float] = []

        class Server(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                self.transport = transport

            def data_received(self, data: bytes) -> None:
                time.sleep(0.06)
                waited.append(arrival.kernel_wait(self.transport, ready_at=time.monotonic() - 0.02))
                waited.append(arrival.kernel_wait(self.transport, ready_at=time.monotonic()))
                self.transport.close()

        server = await asyncio.get_running_loop().create_server(Server, "127.0.0.1", 0)
        reader, writer = await asyncio.open_connection("127.0.0.1", server.sockets[0].getsockname()[1])
        writer.write(b"request")
        await reader.read()
        writer.close()
        server.close()
        return waited[0], waited[1]

    since_ready, ready_now = asyncio.run(main())
    if hasattr(socket, "TCP_INFO"):
        assert since_ready == pytest.approx(0.02, abs=0.005)
    assert ready_now < 0.001  # came before the app was ready: no wait counted


def test_streams_that_start_together_make_their_runs_at_different_tokens() -> None:
    """Runs are made in the tick, a run at a time. Streams that start in the same millisecond would
    all make a run at the same token, every RUN_CHUNKS chunks, and stall every stream while they do;
    the second run's length is staggered by each stream's start (its microseconds), so the
    boundaries spread out, and the deadlines stay exactly those of chunks()."""
    boundaries = set()
    for k in range(40):
        start = 100.0 + k * 0.000_013  # 13 µs apart: 40 streams within half a millisecond
        schedule = Schedule.build(
            start=start, ttft=0.2, tokens_per_second=750, total_tokens=400, jitter=0.5, rng=random.Random(k)
        )
        runs = list(Pacer(FakeClock(), schedule).runs(1, 400))
        chunks = list(Pacer(FakeClock(), schedule).chunks(1, 400))
        assert [due for _, _, dues in runs for due in dues] == [due for _, _, due in chunks]
        assert runs[0][1] - runs[0][0] == FIRST_RUN_CHUNKS
        assert all(hi - lo == RUN_CHUNKS for lo, hi, _ in runs[2:-1])
        boundaries.add(runs[1][1])  # where the second run ends: the first run made later
    assert len(boundaries) > 20  # spread over the run's length, not all at one token
