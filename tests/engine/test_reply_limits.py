"""The streams' wall-clock limits on one timer: each watched stream that is still open when its limit
comes is told once; streams that ended are skipped and, once they are many or nothing is open, let go."""

from __future__ import annotations

import asyncio

from mockserver.engine.active_stream import ActiveStream, ReplyLimits
from mockserver.engine.dialects import CHAT


async def _send(message: dict[str, object]) -> None:
    return None


def _stream(loop: asyncio.AbstractEventLoop) -> ActiveStream:
    return ActiveStream(iter(()), _send, _send, None, "/v1/chat/completions", CHAT, None, loop.create_future())


def test_a_stream_still_open_at_its_limit_is_told_once_and_an_ended_one_never() -> None:
    async def run() -> list[ActiveStream]:
        loop = asyncio.get_running_loop()
        told: list[ActiveStream] = []
        limits = ReplyLimits(told.append)
        kept, ended, later = _stream(loop), _stream(loop), _stream(loop)
        limits.watch(kept, 0.02)
        limits.watch(ended, 0.01)
        limits.watch(later, 5)
        ended.over = True
        limits.ended(ended, still_open=2)
        await asyncio.sleep(0.06)
        assert len(limits) == 1  # the later one waits on; the other two are gone
        return told

    told = asyncio.run(run())
    assert len(told) == 1 and not told[0].over


def test_ended_streams_are_let_go_once_they_are_half_or_nothing_is_open() -> None:
    async def run() -> None:
        loop = asyncio.get_running_loop()
        limits = ReplyLimits(lambda stream: None)
        streams = [_stream(loop) for _ in range(200)]
        for stream in streams:
            limits.watch(stream, 600)
        for count, stream in enumerate(streams[:150], 1):
            stream.over = True
            limits.ended(stream, still_open=200 - count)
        assert len(limits) < 200  # rebuilt without the ended ones on the way
        for stream in streams[150:]:
            stream.over = True
            limits.ended(stream, still_open=0)
        assert len(limits) == 0

    asyncio.run(run())


def test_streams_on_a_new_loop_are_held_to_their_limit_too() -> None:
    told: list[ActiveStream] = []
    limits = ReplyLimits(told.append)

    async def run(seconds: float, wait: float) -> None:
        limits.watch(_stream(asyncio.get_running_loop()), seconds)
        await asyncio.sleep(wait)

    asyncio.run(run(0.05, 0))  # its loop closes with the timer armed, before the limit comes
    asyncio.run(run(0.1, 0.2))  # a later limit: the timer is armed again, on this loop
    assert len(told) == 1
