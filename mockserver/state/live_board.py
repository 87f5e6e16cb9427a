"""The streams in flight of every process, for a dashboard served by one of them (``--state redis://``).

With ``--workers N`` or several replicas, each process plays its own streams; a dashboard is
served by one of them. While a dashboard is open anywhere (its process renews
:meth:`LiveBoard.watch`, which lapses after :data:`WATCH_MS`), every process posts the rows of
its own streams a few times a second (:meth:`LiveBoard.publish`) into one hash, one field per
process; the dashboard's process reads the others' (:meth:`LiveBoard.exchange`). A field older
than :data:`STALE_S` (a process that stopped) is ignored and removed. With no dashboard open, a
process makes one small read every :data:`PUBLISH_EVERY_S` and posts nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Callable
from typing import Any

import orjson

from mockserver import errors
from mockserver.state import shared

logger = logging.getLogger("mockserver")

WATCH_MS = 3000  # a dashboard's interest lapses this long after its last update
PUBLISH_EVERY_S = 0.25
STALE_S = 2.0  # a process's rows older than this are no longer shown

Post = dict[str, Any]  # what one process posts: its stream rows ("rows") and anything else the page shows


class LiveBoard:
    def __init__(self, where: shared.Shared, wall_clock: Callable[[], float]) -> None:
        self._redis = where.connection
        self._url = where.url
        self._watched = where.key("live:watched")
        self._streams = where.key("live:streams")
        self._wall = wall_clock
        self.token = secrets.token_hex(8)  # this process's field
        self._task: asyncio.Task[None] | None = None

    async def exchange(self, here: Post) -> list[Post]:
        """A dashboard here: say so, and return this process's post followed by every other's."""
        try:
            async with shared.reaching(self._url):
                await self._redis.set(self._watched, b"1", px=WATCH_MS)
                posted = await self._redis.hgetall(self._streams)
        except errors.MockAPIError:
            return [here]  # Redis is away: this process's own, as far as it can tell
        now, posts, stale = self._wall(), [here], []
        for field, value in posted.items():
            name = field.decode() if isinstance(field, bytes) else str(field)
            if name == self.token:
                continue
            data = orjson.loads(value)
            if now - data["at"] > STALE_S:
                stale.append(name)
                continue
            posts.append(data)
        if stale:
            with contextlib.suppress(Exception):
                await self._redis.hdel(self._streams, *stale)
        return posts

    def start(self, post: Callable[[], Post], stopping: Callable[[], bool]) -> None:
        """Post ``post()`` while a dashboard is open anywhere, until the process stops (started once)."""
        if self._task is None:
            self._task = asyncio.ensure_future(self._publish(post, stopping))

    async def _publish(self, post: Callable[[], Post], stopping: Callable[[], bool]) -> None:
        while not stopping():
            try:
                async with shared.reaching(self._url):
                    if await self._redis.exists(self._watched):
                        value = orjson.dumps({**post(), "at": self._wall()})
                        await self._redis.hset(self._streams, self.token, value)
            except errors.MockAPIError:
                pass  # Redis is away: try again at the next round
            except Exception:
                logger.exception("posting this process's streams for the dashboard failed")
            await asyncio.sleep(PUBLISH_EVERY_S)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
            self._task = None
