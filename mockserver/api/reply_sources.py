"""The reply planner's view of the running server (:func:`reply_sources`), for the inference families.

Apart from :mod:`mockserver.api.handler_inputs`, which every route reads: the planner and the content
writer load with the first inference request, not at start-up.
"""

from __future__ import annotations

from mockserver.replies.content import Writer
from mockserver.replies.planner import Sources
from mockserver.server_state import ServerState

# The planner's view of the server made last (see reply_sources): one, so nothing grows.
_last_sources: Sources | None = None


def reply_sources(state: ServerState) -> Sources:
    """What the reply planner reads of the running server, as it is now.

    Made again only when one of its parts is no longer the server's: a reset, a patch or a preset
    replaces the fixture (and a patch may replace the settings, whose ``time_scale`` it reads). Every
    request reads it, and most come while the same fixture is in force, so the last one made is kept
    (one object, whatever the server or fixture: a process serving several servers makes it again
    when they alternate).
    """
    global _last_sources
    sources = _last_sources
    if sources is not None:
        writer = sources.writer
        if (
            writer.fixture is state.fixture
            and writer.time_scale == state.settings.time_scale
            and writer.generator is state.generator
            and sources.sequences is state.script_state
            and sources.clock is state.clock
        ):
            return sources
    writer = Writer(state.fixture, state.generator, state.settings.time_scale)
    sources = Sources(writer, state.script_state, state.clock)
    _last_sources = sources
    return sources
