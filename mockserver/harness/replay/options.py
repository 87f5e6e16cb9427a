"""The replay options (``--replay``, ``--replay-timing``, ``--replay-miss``, the fixture's ``replay:``) at
start-up, without the cassettes: a server that replays nothing never loads :mod:`.library`.
"""

from __future__ import annotations

from typing import Literal

from mockserver.config.fixture import Fixture
from mockserver.config.settings import Settings

ReplayTiming = Literal["recorded", "tier", "instant"]
ReplayMiss = Literal["error", "generate", "record"]
REPLAY_TIMINGS: tuple[ReplayTiming, ...] = ("recorded", "tier", "instant")
REPLAY_MISSES: tuple[ReplayMiss, ...] = ("error", "generate", "record")


def fixture_with(fixture: Fixture, settings: Settings) -> Fixture:
    """:func:`mockserver.harness.replay.library.fixture_with`: the fixture with the replay options added and
    its cassettes loaded and checked. With no option to add or check, the fixture as it is."""
    if not in_force(fixture, settings):
        return fixture
    from mockserver.harness.replay import library  # the cassettes: only for a server that replays

    return library.fixture_with(fixture, settings)


def checked(fixture: Fixture) -> Fixture:
    """:func:`mockserver.harness.replay.library.checked`: the fixture with its cassettes loaded and checked;
    with none, the fixture as it is."""
    if not fixture.replay:
        return fixture
    from mockserver.harness.replay import library

    return library.checked(fixture)


def in_force(fixture: Fixture, settings: Settings) -> bool:
    """Whether start-up has replay options to add or to check: cassettes, a timing or a miss given on the
    command line, or a ``record`` miss (which needs an upstream)."""
    return bool(
        fixture.replay
        or settings.replay
        or settings.replay_timing is not None
        or settings.replay_miss is not None
        or fixture.replay_miss == "record"
    )
