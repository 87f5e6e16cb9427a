"""The state one server holds, behind one object with :meth:`ServerState.reset`.

Routes reach it as ``request.app.state.mock``. It owns the fixture in force, the
clock, the seeded random source for ids, so a run is reproducible from
``--seed``, and the :class:`~mockserver.state.store.Store` of rate windows, capacity
counters and the usage ledger. Tests never reach into module globals.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mockserver.config.fixture import Fixture
from mockserver.config.settings import Settings
from mockserver.engine.generation import TextGenerator
from mockserver.engine.pacing import Clock, MonotonicClock
from mockserver.engine.scheduler import StreamScheduler
from mockserver.harness import control
from mockserver.harness.faults.injection import FaultState
from mockserver.harness.journal import Journal
from mockserver.harness.metrics import Metrics
from mockserver.harness.scripts import ScriptState
from mockserver.service import capacity
from mockserver.service.exchange import ExchangeHooks
from mockserver.service.inflight import InFlight
from mockserver.service.response_store import ResponseStore
from mockserver.state.store import MemoryStore, Store

ID_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


class IdFactory:
    """Object ids with the live API's prefixes (``chatcmpl-``, ``resp_``, ``req_``), from one seeded source."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)

    def token(self, length: int = 24) -> str:
        return "".join(self._rng.choices(ID_ALPHABET, k=length))

    def hex(self, length: int = 32) -> str:
        return f"{self._rng.getrandbits(length * 4):0{length}x}"

    def chat_completion(self) -> str:
        return f"chatcmpl-{self.token(29)}"

    def request(self) -> str:
        return f"req_{self.hex(32)}"

    def prefixed(self, prefix: str) -> str:
        return f"{prefix}_{self.hex(48)}"

    def fingerprint(self) -> str:
        return f"fp_{self.hex(10)}"


@dataclass
class ServerState:
    settings: Settings
    fixture: Fixture
    clock: Clock = field(default_factory=MonotonicClock)
    generator: TextGenerator = field(default_factory=TextGenerator)
    wall_clock: Callable[[], float] = time.time
    hooks: ExchangeHooks = field(default_factory=ExchangeHooks)
    store: Store = field(default_factory=MemoryStore)

    def __post_init__(self) -> None:
        self._initial_fixture = self.fixture
        self._initial_settings = self.settings
        self.ids = IdFactory(self.settings.seed)
        self.system_fingerprint = IdFactory(self.settings.seed ^ 0xF1).fingerprint()
        self.responses = ResponseStore(
            self.clock.now, max_items=self.settings.stored_responses, ttl_s=self.settings.stored_response_ttl
        )
        self.journal = Journal(
            self.settings.journal_size, wall_clock=self.wall_clock, max_bytes=self.settings.journal_bytes
        )
        self.fault_state = FaultState(self.settings.seed)
        self.script_state = ScriptState()
        self.replies = InFlight()  # held non-streaming replies
        self.streams = StreamScheduler(self.clock)  # every open stream, on one timer; ended with a final event on stop
        self.streams.max_reply_s = self.settings.max_reply_seconds  # fixed for the process
        self.metrics = Metrics(
            active_streams=lambda: len(self.streams.active),
            ultrafast_slots=lambda: self.store.held_here(capacity.SERVER_POOL),
        )

    async def reset(self) -> None:
        """Back to how the server started: the original fixture and settings, a fresh id sequence,
        no stored responses, empty rate windows, ledger and journal, fresh fault counters and
        script sequences.
        Replies still being held are ended (they answer 503 ``server_reset``) and give back their
        Ultrafast slots; a slot is only ever released by the reply that holds it, so the capacity
        cap stays exact across a reset."""
        self.replies.end_all("reset")
        self.restore((self._initial_settings, self._initial_fixture))
        self.ids = IdFactory(self.settings.seed)
        self.responses.reset()
        await self.store.reset()
        self.journal.clear()
        self.fault_state.clear()
        self.script_state.clear()

    def reset_scope(self, test_id: str) -> None:
        """Forget one test's journal entries, fault counters and script sequences; the configuration
        is shared and stays."""
        self.journal.clear(test_id)
        self.fault_state.clear(test_id)
        self.script_state.clear(test_id)

    def snapshot(self) -> tuple[Settings, Fixture]:
        """The configuration in force (both parts are immutable), to :meth:`restore` later."""
        return self.settings, self.fixture

    def configure(self, patch: Any) -> None:
        """Apply a merge patch to the configuration, atomically (see :mod:`mockserver.harness.control`)."""
        self.restore(control.apply_patch(self.settings, self.fixture, patch, initial=self._initial_settings))

    def restore(self, snapshot: tuple[Settings, Fixture]) -> None:
        settings, fixture = snapshot
        if settings.seed != self.settings.seed:
            self.fault_state = FaultState(settings.seed)
        self.settings, self.fixture = settings, fixture
