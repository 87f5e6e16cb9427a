"""The recorders a replaying server forwards its misses through (``replay_miss: record``).

One :class:`~.proxy.Recorder` per upstream, cassette and redaction patterns (a fixture's ``redact:``
changed while the server runs applies to the next miss recorded), each with its own pool of
connections to the upstream; at most :data:`RECORDERS_KEPT` are kept, the one used least recently going first. A
recorder that goes closes its upstream client once no exchange still runs through it (a stream
being relayed keeps it open until it ends), and the server closes every one when it stops.
"""

from __future__ import annotations

from collections.abc import Callable

from mockserver.cassettes.files import CassetteWriter
from mockserver.cassettes.redaction import Redactor
from mockserver.recording.proxy import Recorder
from mockserver.recording.upstream import Upstream

RECORDERS_KEPT = 16  # a server rarely records to more than one or two cassettes at a time


def new_recorder(upstream: str, cassette: str, redact: list[str]) -> Recorder:
    return Recorder(Upstream(upstream), CassetteWriter(cassette), Redactor(redact))


class Recorders:
    def __init__(self, kept: int | None = None, make: Callable[[str, str, list[str]], Recorder] = new_recorder) -> None:
        self.kept = RECORDERS_KEPT if kept is None else kept
        self._make = make
        self._by_target: dict[tuple[str, str, tuple[str, ...]], Recorder] = {}  # least recently used first
        self._leaving: list[Recorder] = []  # gone from the cache, an exchange still running through them

    async def get(self, upstream: str, cassette: str, redact: list[str]) -> Recorder:
        """The recorder for this upstream, cassette and redaction patterns. Start the exchange on it
        before anything else is awaited: a recorder with nothing in flight may be closed as soon as
        another is asked for."""
        key = (upstream, cassette, tuple(redact))
        recorder = self._by_target.pop(key, None)
        if recorder is None:
            while len(self._by_target) >= self.kept:
                oldest = self._by_target.pop(next(iter(self._by_target)))
                self._leaving.append(oldest)
                await oldest.retire()
            self._leaving = [r for r in self._leaving if not r.settled()]
            # Another request may have made this one while the oldest closed.
            recorder = self._by_target.pop(key, None) or self._make(upstream, cassette, redact)
        self._by_target[key] = recorder  # the most recently used, last
        return recorder

    def __len__(self) -> int:
        return len(self._by_target)

    async def aclose(self) -> None:
        """The server is stopping: close every upstream client, busy or not."""
        recorders = [*self._by_target.values(), *self._leaving]
        self._by_target.clear()
        self._leaving.clear()
        for recorder in recorders:
            recorder.retired = True
            await recorder.upstream.aclose()
