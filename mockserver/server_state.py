"""The state one server holds, behind one object with :meth:`ServerState.reset`.

Routes reach it as ``request.app.state.mock``. It owns the fixture in force, the
clock, the seeded random source for ids, so a run is reproducible from
``--seed``, and the :class:`~mockserver.state.store.Store` of rate windows, capacity
counters and the usage ledger. Tests never reach into module globals.
"""

from __future__ import annotations

import asyncio
import logging
import random
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from mockserver import errors
from mockserver.config.fixture import Fixture
from mockserver.config.settings import Settings
from mockserver.engine.generation import TextGenerator
from mockserver.engine.pacing import Clock, MonotonicClock
from mockserver.engine.scheduler import StreamScheduler
from mockserver.harness.faults.injection import FaultState
from mockserver.harness.journal import Journal, RequestJournal
from mockserver.harness.journal.shared import SharedJournal
from mockserver.harness.live.speed_check import SpeedCheck
from mockserver.harness.live.streams import LiveStreams
from mockserver.harness.scripted import ScriptState
from mockserver.operations import configuration
from mockserver.operations.metrics import Metrics
from mockserver.service import capacity
from mockserver.service.capacity import queue as capacity_queue
from mockserver.service.exchange import ExchangeHooks
from mockserver.service.inflight import InFlight
from mockserver.state.config_log import MAX_PATCHES, ConfigLog, Position
from mockserver.state.counters import Counters, MemoryCounters
from mockserver.state.journal_log import JournalLog
from mockserver.state.live_board import LiveBoard
from mockserver.state.responses import BaseResponseStore, ResponseStore
from mockserver.state.shared import Shared
from mockserver.state.shared_counters import RedisCounters
from mockserver.state.shared_responses import RedisResponseStore
from mockserver.state.store import MemoryStore, Store

logger = logging.getLogger("mockserver")

ID_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
# A random byte below 248 (four whole rounds of the 62 characters) is a character of an id, each as likely;
# one from 248 on is dropped (bytes.translate does both at once).
_ID_ROUNDS = 4 * len(ID_ALPHABET)
_ID_CHARACTERS = bytes.maketrans(bytes(range(_ID_ROUNDS)), (ID_ALPHABET * 4).encode())
_ID_DROPPED = bytes(range(_ID_ROUNDS, 256))


class IdFactory:
    """Object ids with the live API's prefixes (``chatcmpl-``, ``resp_``, ``req_``), from one seeded source."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)

    def token(self, length: int = 24) -> str:
        """``length`` characters of :data:`ID_ALPHABET`, each drawn evenly: every reply's id is made here, from
        random bytes mapped in one call rather than a draw and a lookup per character. The bytes are those
        of :meth:`random.Random.randbytes`, drawn as it draws them but without its call in between."""
        getrandbits = self._rng.getrandbits
        size = length + 8
        drawn = getrandbits(size * 8).to_bytes(size, "little").translate(_ID_CHARACTERS, _ID_DROPPED)
        while len(drawn) < length:  # more than 8 of them dropped (about one id in 100,000)
            drawn += getrandbits(length * 8).to_bytes(length, "little").translate(_ID_CHARACTERS, _ID_DROPPED)
        return drawn[:length].decode("ascii")

    def hex(self, length: int = 32) -> str:
        """``length`` hex digits of one draw of ``length * 4`` bits, zero-padded. An even length (every
        id's) is written from the draw's bytes: the same digits, in a third of the time of a format."""
        drawn = self._rng.getrandbits(length * 4)
        if length > 0 and length % 2 == 0:
            return drawn.to_bytes(length // 2, "big").hex()
        return f"{drawn:0{length}x}"

    def chat_completion(self) -> str:
        return "chatcmpl-" + self.token(29)

    def request(self) -> str:
        return "req_" + self._rng.getrandbits(128).to_bytes(16, "big").hex()  # hex(32), written out

    def prefixed(self, prefix: str) -> str:
        return f"{prefix}_{self.hex(48)}"

    def fingerprint(self) -> str:
        return f"fp_{self.hex(10)}"


class Closeable(Protocol):
    async def aclose(self) -> None: ...


@dataclass
class ServerState:
    settings: Settings
    fixture: Fixture
    clock: Clock = field(default_factory=MonotonicClock)
    generator: TextGenerator = field(default_factory=TextGenerator)
    wall_clock: Callable[[], float] = time.time
    hooks: ExchangeHooks = field(default_factory=ExchangeHooks)
    store: Store = field(default_factory=MemoryStore)
    shared: Shared | None = None  # where state shared with other processes lives (--state redis://...)

    def __post_init__(self) -> None:
        self._initial_fixture = self.fixture
        self._initial_settings = self.settings
        self._config_seen = Position()  # how far this process has followed the shared configuration
        self._config_lock = asyncio.Lock()
        # The configuration shared with other processes; None: this process's alone.
        self.config_log = ConfigLog(self.shared) if self.shared is not None else None
        # Shared with other processes, ids must differ from theirs (each process starts from the same seed,
        # and a response one stores must not be overwritten by another's), so each mixes in a salt of its own.
        self._id_salt = 0 if self.shared is None else secrets.randbits(64)
        self.ids = IdFactory(self.settings.seed ^ self._id_salt)
        self.system_fingerprint = IdFactory(self.settings.seed ^ 0xF1).fingerprint()
        self.responses = _responses(self.shared, self.clock, self.wall_clock, self.settings)
        self.journal = self._journal()
        self.fault_state = FaultState(self.settings.seed, _counters(self.shared, "faults"))
        self.script_state = ScriptState(_counters(self.shared, "scripts"))
        self.replay_order = _counters(self.shared, "replay")  # which recording identical requests get next
        self.replies = InFlight()  # held non-streaming replies
        self.streams = StreamScheduler(self.clock)  # every open stream, on one timer; ended with a final event on stop
        self.streams.max_reply_s = self.settings.max_reply_seconds  # fixed for the process
        self.streams.ends_in_task = self.shared is not None  # the end of a reply awaits Redis
        # What the dashboard (/_mock/ui) shows: the streams being played with their exchanges, every
        # process's streams when they are shared, and the speed check.
        self.live = LiveStreams()
        self.live_board = LiveBoard(self.shared, self.wall_clock) if self.shared is not None else None
        self.speed_check = SpeedCheck(self.clock.now, self.wall_clock)
        self.metrics = Metrics(
            active_streams=lambda: len(self.streams.active),
            ultrafast_slots=lambda: self.store.held_here(capacity.SERVER_POOL),
            lateness=self.streams.lateness,
        )
        self.streams.lateness.on_window = self.metrics.publish_lateness  # about once a second while streams run
        # The two gauges follow their figures as they change (with several workers, nothing can read
        # another worker's figures when scraped).
        if self.metrics.pushes_gauges:  # otherwise each gauge is read when scraped: nothing to tell it
            self.streams.on_change = self.metrics.streams_changed
            self.store.on_held_change = self.metrics.slots_changed
        # What the layers above open on the way and close when the server stops, by name: the recorders
        # of replay misses, with their connections to the upstream.
        self.resources: dict[str, Closeable] = {}

    async def reset(self) -> None:
        """Back to how the server started: the original fixture and settings, a fresh id sequence,
        no stored responses, empty rate windows, ledger and journal, fresh fault counters and
        script sequences.
        Replies still being held are ended (they answer 503 ``server_reset``), and so are the streams
        still open in this process (their last event is the ``server_reset`` error); both give back
        their Ultrafast slots; a slot is only ever released by the reply that holds it, so the
        capacity cap stays exact across a reset.
        With a shared store, the shared parts (windows, ledger, configuration) are reset for every
        process; the others take the initial configuration back before their next request."""
        self.replies.end_all("reset")
        self.streams.finish_all(lambda stream: stream.dialect.reset_event(stream.events_sent))
        if self.config_log is not None:
            async with self._config_lock:
                self._config_seen = await self.config_log.reset()
        self.restore((self._initial_settings, self._initial_fixture))
        if self.shared is not None:
            # Request ids are the idempotency keys of admission and the ledger in Redis (done:* keys
            # outlive a reset): the ids given before the reset must not come again after it.
            self._id_salt = secrets.randbits(64)
        self.ids = IdFactory(self.settings.seed ^ self._id_salt)
        await self.responses.reset()
        await self.store.reset()
        await self.journal.forget()
        await self.fault_state.clear()
        await self.script_state.clear()
        await self.replay_order.clear()

    async def close(self) -> None:
        """The server is stopping: let go of the shared store's connection, background work and :attr:`resources`.
        Everything is closed even when one of them fails: each failure is logged (with its traceback) on the
        ``mockserver`` logger, and none is raised, so the rest of the shutdown goes on."""
        closing: list[tuple[str, Callable[[], Awaitable[None]]]] = [
            (f"resource {name!r}", resource.aclose) for name, resource in self.resources.items()
        ]
        self.resources.clear()
        if self.live_board is not None:
            closing.append(("the live board", self.live_board.close))
        closing += [("the stored responses", self.responses.close), ("the store", self.store.close)]
        for what, close in closing:
            try:
                await close()
            except Exception:
                logger.exception("closing %s failed; the rest is closed all the same", what)

    async def reset_scope(self, test_id: str) -> None:
        """Forget one test's journal entries, fault counters and script sequences (in every process,
        when they are shared); the configuration is shared and stays."""
        await self.journal.forget(test_id)
        await self.fault_state.clear(test_id)
        await self.script_state.clear(test_id)
        await self.replay_order.clear(test_id)

    def stream_rows(self) -> list[dict[str, Any]]:
        """The streams this process is playing, as the dashboard lists them (keys masked)."""
        return self.live.rows(self.clock.now(), self.streams.active, [a.key for a in self.fixture.accounts])

    def live_post(self) -> dict[str, Any]:
        """What this process shows a dashboard served by any process: its streams and its speed check."""
        return {"rows": self.stream_rows(), "speed_check": self.speed_check.shown()}

    def _journal(self) -> RequestJournal:
        """The journal in this process's memory, or the one every process shares through Redis."""
        size, max_bytes = self.settings.journal_size, self.settings.journal_bytes
        if self.shared is None:
            return Journal(size, wall_clock=self.wall_clock, max_bytes=max_bytes)

        def known_keys() -> list[str]:  # the fixture's keys in force when an entry is recorded: masked in it
            return [a.key for a in self.fixture.accounts]

        return SharedJournal(JournalLog(self.shared), size, known_keys, self.wall_clock, max_bytes=max_bytes)

    def snapshot(self) -> tuple[Settings, Fixture]:
        """The configuration in force (both parts are immutable), to :meth:`restore` later."""
        return self.settings, self.fixture

    def configure(self, patch: Any) -> None:
        """Apply a merge patch to this process's configuration, atomically
        (see :mod:`mockserver.operations.configuration`)."""
        self.restore(configuration.apply_patch(self.settings, self.fixture, patch, initial=self._initial_settings))

    async def configure_everywhere(self, patch: Any) -> None:
        """``PATCH /_mock/config``: apply a merge patch here and, with a shared configuration, in every
        process: the patch is checked against the log's head and appended there only if the head is
        still the same (:meth:`ConfigLog.append`), and the log is followed, so every process applies
        the same patches in the same order. A patch that another process's patch, landed first, made
        invalid is refused with a 409; a refused patch changes nothing anywhere."""
        if self.config_log is None:
            self.configure(patch)
            return
        for attempt in range(CONFIG_ATTEMPTS):
            await self.follow_config()
            async with self._config_lock:  # the position and the configuration it stands for, together
                head, settings, fixture = self._config_seen, self.settings, self.fixture
            try:
                configuration.apply_patch(settings, fixture, patch, initial=self._initial_settings)
            except errors.MockAPIError as exc:
                if attempt == 0:
                    raise  # invalid on the configuration it was sent to: the 400 as in one process
                raise errors.config_conflict(exc.message) from None
            length = await self.config_log.append(patch, onto=head)
            if length is not None:
                break
        else:
            raise errors.config_conflict(f"the configuration changed {CONFIG_ATTEMPTS} times meanwhile.")
        await self.follow_config()
        if length > MAX_PATCHES:
            initial = configuration.document(self._initial_settings, self._initial_fixture)
            whole = configuration.difference(initial, configuration.document(self.settings, self.fixture))
            if await self.config_log.fold(self._config_seen, whole):
                await self.follow_config()

    async def follow_config(self) -> None:
        """Catch up with the configuration other processes changed (one round trip when nothing did)."""
        if self.config_log is None or await self.config_log.position() == self._config_seen:
            return
        async with self._config_lock:
            changes = await self.config_log.since(self._config_seen)
            snapshot = (self._initial_settings, self._initial_fixture) if changes.restart else self.snapshot()
            for patch in changes.patches:
                try:
                    snapshot = configuration.apply_patch(*snapshot, patch, initial=self._initial_settings)
                except errors.MockAPIError as exc:
                    # Checked before it was shared, but against the configuration of the process that took it.
                    logger.warning("a shared configuration patch does not apply here and is skipped: %s", exc.message)
            self.restore(snapshot)
            self._config_seen = changes.position

    def restore(self, snapshot: tuple[Settings, Fixture]) -> None:
        settings, fixture = snapshot
        if settings.seed != self.settings.seed:
            self.fault_state.reseed(settings.seed)
        changed = fixture is not self.fixture
        self.settings, self.fixture = settings, fixture
        if changed:  # requests waiting for an Ultrafast slot try again under the caps now in force
            capacity_queue.reconfigured(self.store)


CONFIG_ATTEMPTS = 8  # a PATCH racing other processes' patches is checked again this many times at most


def _counters(where: Shared | None, namespace: str) -> Counters:
    """Per-test counters in this process, or in the Redis every worker and replica shares."""
    return MemoryCounters() if where is None else RedisCounters(where, namespace)


def _responses(
    where: Shared | None, clock: Clock, wall_clock: Callable[[], float], settings: Settings
) -> BaseResponseStore:
    """Stored responses in this process, or in the Redis every worker and replica shares."""
    count, age, size = settings.stored_responses, settings.stored_response_ttl, settings.stored_response_bytes
    if where is None:
        return ResponseStore(clock.now, max_items=count, ttl_s=age, max_bytes=size)
    return RedisResponseStore(where, clock.now, wall_clock, max_items=count, ttl_s=age, max_bytes=size)
