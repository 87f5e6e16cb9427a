"""The recordings in force, and the one that answers a request.

A :class:`Library` is built once per set of cassettes (and rebuilt when one of their files
changes): every record is indexed by its match key (:mod:`mockserver.cassettes.matching`).
Identical requests take their recordings in the order recorded, one each: the n-th request of a
test (its ``x-mock-test-id``, or none) gets the n-th recording, and once they are used up the last
one answers again. The positions are counters in the shared store, so every worker follows one order.
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mockserver import errors
from mockserver.cassettes import files, matching, sources, vcr
from mockserver.cassettes.format import Record
from mockserver.cassettes.vcr import VcrSkip
from mockserver.config.fixture import ConfigError, Fixture
from mockserver.config.settings import Settings
from mockserver.harness.replay.served_models import with_recorded_models
from mockserver.state.counters import Counters

LIBRARIES_KEPT = 8  # distinct sets of cassettes kept loaded (a test suite switches between a few)


@dataclass(frozen=True)
class Entry:
    record: Record
    where: str  # "file:line", for messages
    body: Any  # the request body as matched


class Library:
    def __init__(
        self, cassettes: Sequence[files.Cassette], rules: matching.Rules, skipped: Sequence[VcrSkip] = ()
    ) -> None:
        self.rules = rules
        self.sources = [str(c.path) for c in cassettes]
        self.untimed = [str(c.path) for c in cassettes if c.untimed]  # VCR cassettes: no timing recorded
        self.skipped = list(skipped)  # the VCR interactions that are not served, and why
        self.records = [r for c in cassettes for r in c.records]
        self._by_key: dict[bytes, list[Entry]] = {}
        self._by_route: dict[tuple[str, str], list[Entry]] = {}
        for cassette in cassettes:
            for index, record in enumerate(cassette.records):
                request = record.request
                entry = Entry(record, cassette.where(index), matching.canonical(request.body, rules))
                key = matching.key(request.method, request.path, request.body, rules)
                self._by_key.setdefault(key, []).append(entry)
                self._by_route.setdefault((request.method.upper(), request.path), []).append(entry)

    def __len__(self) -> int:
        return sum(len(v) for v in self._by_key.values())

    def matches(self, method: str, path: str, body: Any) -> tuple[bytes, list[Entry]]:
        key = matching.key(method, path, body, self.rules)
        return key, self._by_key.get(key, [])

    def miss(self, method: str, path: str, body: Any) -> errors.InvalidRequestError:
        """The 400 for a request no recording matches: the nearest one, and the first field that differs."""
        route = self._by_route.get((method.upper(), path), [])
        where = ", ".join(self.sources) or "none"
        if not route:
            return errors.InvalidRequestError(
                f"No recording matches {method.upper()} {path}: the cassettes in force ({where}) hold no "
                "exchange with this method and path. Record it (mockserver record, or --replay-miss record).",
                code="no_recording",
            )
        asked = matching.canonical(body, self.rules)
        found = matching.nearest(asked, ((e, e.body) for e in route))
        assert found is not None  # the same body would have matched
        entry, diff = found
        return errors.InvalidRequestError(
            f"No recording matches this request. The nearest is {entry.record.id} ({entry.where}), which differs "
            f"first at `{diff.field}`: the request has {matching.shown(diff.asked)}, the recording "
            f"{matching.shown(diff.recorded)} ({diff.count} field{'s' if diff.count != 1 else ''} differ in all).",
            param=diff.field,
            code="no_recording",
        )


def load(paths: Sequence[str], ignore: Sequence[str] = (), *, tier_free: bool = False) -> Library:
    """The library of ``paths`` (files, folders, globs), loaded again only when one of the paths changed (a
    folder: when a file is added to it or taken away; a glob is read once)."""
    stamps = tuple((p, *_stamp(p)) for p in paths)
    return _load(stamps, tuple(ignore), tier_free)


def _stamp(path: str) -> tuple[int, int]:
    try:
        info = os.stat(path)
    except OSError:
        return (-1, -1)  # loading it says why
    return info.st_mtime_ns, info.st_size


@functools.lru_cache(maxsize=LIBRARIES_KEPT)
def _load(stamps: tuple[tuple[str, int, int], ...], ignore: tuple[str, ...], tier_free: bool) -> Library:
    loaded = sources.load([path for path, *_ in stamps])
    return Library(loaded.cassettes, matching.Rules(ignore=ignore, tier_free=tier_free), loaded.skipped)


async def take(counters: Counters, scope: str | None, key: bytes, entries: Sequence[Entry]) -> Entry:
    """The next of ``entries`` for this test: each identical request gets the next recording, the last repeats."""
    digest = hashlib.blake2b(key, digest_size=12).hexdigest()
    for index, entry in enumerate(entries[:-1]):
        if await counters.take(scope, f"{digest}:{index}", 1):
            return entry
    return entries[-1]


def fixture_with(fixture: Fixture, settings: Settings) -> Fixture:
    """The fixture with the replay options of the command line or ``MockServer(replay=...)`` added, checked:
    every cassette loads (else :class:`ConfigError` with ``file:line`` and why), and a ``record`` miss has
    an upstream."""
    changes: dict[str, Any] = {}
    timing_asked = settings.replay_timing is not None or "replay_timing" in fixture.model_fields_set
    if settings.replay:
        changes["replay"] = [*fixture.replay, *(p for p in settings.replay if p not in fixture.replay)]
    if settings.replay_timing is not None:
        changes["replay_timing"] = settings.replay_timing
    if settings.replay_miss is not None:
        changes["replay_miss"] = settings.replay_miss
    if changes:
        fixture = fixture.model_copy(update=changes)
        Fixture.model_validate(fixture.model_dump())  # the literal options checked like any fixture's
    fixture = checked(fixture, timing_asked=timing_asked)
    if fixture.replay_miss == "record" and not settings.upstream:
        raise ConfigError("--replay-miss record needs --upstream URL: the API a request with no recording is sent to")
    return fixture


def checked(fixture: Fixture, *, timing_asked: bool = True) -> Fixture:
    """The fixture with its cassettes loaded and checked (:func:`check`), paced as they can be (a VCR
    cassette holds no timing), and serving the models its recordings name."""
    fixture = _untimed_paced(fixture, timing_asked)
    return with_recorded_models(fixture, check(fixture).records)


def _untimed_paced(fixture: Fixture, asked: bool) -> Fixture:
    """A VCR cassette holds no timing: it replays at the tier's pace unless ``instant`` was asked for, and
    ``recorded`` is refused."""
    if fixture.replay_timing != "recorded":
        return fixture
    untimed = next((p for p in sources.expand(fixture.replay) if vcr.is_vcr_file(p)), None)
    if untimed is None:
        return fixture
    if asked:
        raise ConfigError(
            f"--replay-timing recorded: {untimed} is a VCR cassette, which holds no timing; "
            "use --replay-timing tier (the default for VCR cassettes) or instant"
        )
    return fixture.model_copy(update={"replay_timing": "tier"})


def check(fixture: Fixture) -> Library:
    """The fixture's library, or :class:`ConfigError` naming the cassette, the line and why."""
    try:
        return library_for(fixture)
    except files.CassetteError as exc:
        raise ConfigError(f"replay: {exc}") from None


def library_for(fixture: Fixture) -> Library:
    return load(fixture.replay, fixture.replay_ignore, tier_free=fixture.replay_timing == "tier")
