"""``GET /_mock/events``: the dashboard's live updates, one SSE connection per open page.

Each connection pulls what it shows from the server's state itself, at most
:data:`UPDATES_PER_S` times a second (fewer when an update costs more than :data:`CPU_SHARE` of
the loop's time at that rate, as with hundreds of streams), and writes one ``update`` event with what changed since
its last one: the streams in flight (every update while there are any), new journal entries,
the configuration, the usage ledger, the accounts' budgets and the speed check. Nothing is
pushed to it from the request path, so a page that reads slowly, or not at all, only delays its
own next update (its write waits; the state is read again once it goes through): it never holds
back a stream or a request, and it holds at most one update in memory.

Bounded: at most :data:`MAX_CONNECTIONS` dashboards at once (one more gets a 429), an update
carries at most :data:`JOURNAL_BATCH` journal entries and :data:`~mockserver.harness.live.streams.MAX_ROWS`
streams, and a stopping server ends every connection within one update interval.

With ``--workers`` and ``--state redis://``, the journal, configuration, ledger and budgets are the
shared ones; the streams of the other processes come from :mod:`mockserver.state.live_board`,
where each process posts its own while a dashboard is open anywhere.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator
from typing import Any

import orjson

from mockserver.harness.journal import JournalQuery
from mockserver.harness.live import accounts as account_view
from mockserver.operations import configuration
from mockserver.server_state import ServerState
from mockserver.service import capacity, ledger
from mockserver.state.store import LEDGER_COUNTS

UPDATES_PER_S = 10  # updates are merged to at most this many a second
CPU_SHARE = 0.01  # and one page takes at most this share of the event loop: with many streams, fewer updates
SLOW_EVERY = 10  # the ledger, the budgets and the shared configuration are read every this many updates
MAX_CONNECTIONS = 8
# What the usage table sums per (tier, model): the ledger rows' counts.
USAGE_COUNTS = LEDGER_COUNTS
JOURNAL_BATCH = 100  # journal entries per update at most; the first update has the newest ones
LIST_FIELDS = (  # what a journal row carries; the rest (headers, body) is read when one is opened
    "seq",
    "request_id",
    "test_id",
    "method",
    "path",
    "key",
    "model",
    "stream",
    "requested_tier",
    "tier",
    "downgraded",
    "status",
    "error_type",
    "code",
    "param",
    "error_message",
    "usage",
    "fault",
    "disconnected",
    "started_at",
    "duration_ms",
)


class Connections:
    """How many dashboards are connected to this process."""

    def __init__(self, limit: int = MAX_CONNECTIONS) -> None:
        self.limit = limit
        self.open = 0
        self.cpu_s = 0.0  # the CPU every page's updates have cost so far (GET /_mock/stats shows it)

    def take(self) -> bool:
        if self.open >= self.limit:
            return False
        self.open += 1
        return True

    def give_back(self) -> None:
        self.open -= 1


class Feed:
    """What one dashboard connection has been sent, and what to send it next."""

    def __init__(self, state: ServerState) -> None:
        self.state = state
        self._seq = 0
        self._config: object = None
        self._sent: dict[str, bytes] = {}
        self._had_streams = True
        self._count = 0

    async def update(self) -> dict[str, Any]:
        """What changed since the last update (everything, the first time)."""
        state = self.state
        first = self._count == 0
        slow = self._count % SLOW_EVERY == 0
        self._count += 1
        update: dict[str, Any] = {"at": state.wall_clock()}
        if first:
            update["server"] = {"process": os.getpid(), "shared": state.shared is not None}
        if slow:
            await state.follow_config()
        snapshot = state.snapshot()
        if snapshot != self._config:
            self._config = snapshot
            update["config"] = configuration.masked_document(*snapshot)
        streams, speed_check = await self._live()
        if streams or self._had_streams:
            update["streams"] = streams
        self._had_streams = bool(streams)
        journal = await self._journal(first)
        if journal:
            update["journal"] = journal
        if slow or journal:
            self._if_changed(update, "usage", await self._usage())
        if slow:
            now = state.clock.now()
            self._if_changed(update, "accounts", await account_view.accounts(state.store, state.fixture, now))
        self._if_changed(update, "speed_check", speed_check)
        return update

    def _if_changed(self, update: dict[str, Any], name: str, value: Any) -> None:
        encoded = orjson.dumps(value)
        if self._sent.get(name) != encoded:
            self._sent[name] = encoded
            update[name] = value

    async def _live(self) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        """The streams in flight and the newest speed check: this process's, or every process's."""
        state = self.state
        here = state.live_post()
        posts = [here] if state.live_board is None else await state.live_board.exchange(here)
        rows = [row for post in posts for row in post["rows"]]
        checks = [post["speed_check"] for post in posts if post.get("speed_check")]
        return rows, max(checks, key=lambda check: check["started_at"], default=None)

    async def _journal(self, first: bool) -> list[dict[str, Any]]:
        journal, keys = self.state.journal, [a.key for a in self.state.fixture.accounts]
        newest = await journal.newest()
        if newest <= self._seq and not first:
            if newest < self._seq:  # the journal was cleared
                self._seq = newest
            return []
        shown = await journal.read(JournalQuery(since=self._seq, limit=JOURNAL_BATCH), keys)
        self._seq = max([newest, *(s.data["seq"] for s in shown)])
        return [{k: s.data.get(k) for k in LIST_FIELDS} for s in reversed(shown)]  # newest first

    async def _usage(self) -> dict[str, Any]:
        state = self.state
        report = ledger.report(await state.store.usage(), ledger.UsageFilter())
        table: dict[tuple[str, str], dict[str, Any]] = {}
        for row in report["rows"]:
            key = (row["tier"], row["model"])
            into = table.setdefault(key, {"tier": row["tier"], "model": row["model"]})
            for name in USAGE_COUNTS:
                into[name] = into.get(name, 0) + row[name]
        return {
            "totals": report["totals"],
            "by_tier": report["by_tier"],
            "by_model": report["by_model"],
            "rows": sorted(table.values(), key=lambda r: (r["tier"], r["model"])),
            "ultrafast_in_flight": await state.store.in_flight(capacity.SERVER_POOL),
            "ultrafast_cap": state.fixture.capacity.ultrafast_concurrency,
        }


async def events(state: ServerState, connections: Connections) -> AsyncIterator[bytes]:
    """The SSE body of one dashboard connection: an update at most every 1/UPDATES_PER_S seconds."""
    feed = Feed(state)
    interval = 1 / UPDATES_PER_S
    yield b"retry: 2000\n\n"
    while not state.streams.stopping:
        # The update's CPU (with Redis, other work that runs while it awaits is counted too: an upper bound).
        started = time.thread_time()
        began = state.clock.now()
        update = b"event: update\ndata: " + orjson.dumps(await feed.update()) + b"\n\n"
        cost = time.thread_time() - started
        connections.cpu_s += cost
        yield update
        # The write above waited for a slow page: the next update comes no sooner than the interval after,
        # nor sooner than CPU_SHARE allows for what this one cost.
        pause = max(interval, cost / CPU_SHARE) - (state.clock.now() - began)
        await asyncio.sleep(max(0.0, pause))
