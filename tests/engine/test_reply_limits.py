"""The wall-clock limit on streams: one timer, ended streams passed over, a bounded heap."""

from __future__ import annotations

import asyncio
from typing import Any

from mockserver.engine.reply_limits import SPARE_ENTRIES, ReplyLimits


class _Stream:
    over = False


def _stream() -> Any:
    return _Stream()


def test_a_stream_still_open_at_its_limit_is_ended_with_that_limit() -> None:
    asyncio.run(_ended_at_limit())


async def _ended_at_limit() -> None:
    ended: list[tuple[Any, float]] = []
    active: set[Any] = set()
    limits = ReplyLimits(active, lambda stream, limit: ended.append((stream, limit)))
    first, second, gone = _stream(), _stream(), _stream()
    active |= {first, second, gone}
    limits.add(first, 0.0)
    limits.add(gone, 0.0)
    limits.add(second, 0.02)
    gone.over = True  # ended before its limit: passed over
    await asyncio.sleep(0.005)
    assert ended == [(first, 0.0)]
    await asyncio.sleep(0.05)
    assert ended == [(first, 0.0), (second, 0.02)]
    assert len(limits) == 0


def test_an_earlier_deadline_added_later_still_comes_first() -> None:
    asyncio.run(_earlier_first())


async def _earlier_first() -> None:
    ended: list[Any] = []
    limits = ReplyLimits(set(), lambda stream, limit: ended.append(stream))
    late, early = _stream(), _stream()
    limits.add(late, 60.0)
    limits.add(early, 0.0)
    await asyncio.sleep(0.005)
    assert ended == [early]
    limits.cancel()


def test_ended_streams_do_not_pile_up() -> None:
    asyncio.run(_no_pile_up())


async def _no_pile_up() -> None:
    active: set[Any] = set()
    limits = ReplyLimits(active, lambda stream, limit: None)
    for _ in range(1000):
        stream = _stream()
        active.add(stream)
        limits.add(stream, 600.0)
        stream.over = True  # the reply ended long before its limit
        active.discard(stream)
    assert len(limits) <= SPARE_ENTRIES + 2
    limits.cancel()
