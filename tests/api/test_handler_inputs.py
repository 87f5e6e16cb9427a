"""What every inference route reads of the running server: its state, and the planner's view of it."""

from __future__ import annotations

from starlette.requests import Request

from mockserver.api.handler_inputs import server_state
from mockserver.api.reply_sources import reply_sources
from mockserver.config.fixture import load_fixture
from mockserver.config.settings import Settings
from mockserver.engine.pacing import FakeClock
from mockserver.server.app import create_app
from mockserver.server_state import ServerState


def test_a_request_reads_the_state_the_app_was_built_with() -> None:
    app = create_app(Settings())
    request = Request({"type": "http", "app": app, "headers": []})
    assert server_state(request) is app.state.mock
    assert server_state(request) is app.mock_state


def test_the_planners_view_is_kept_while_the_fixture_stays() -> None:
    state = ServerState(settings=Settings(time_scale=1.0), fixture=load_fixture(), clock=FakeClock(start=0.0))
    first = reply_sources(state)
    assert reply_sources(state) is first
    assert first.writer.fixture is state.fixture and first.sequences is state.script_state


def test_a_new_fixture_or_time_scale_gives_a_new_view() -> None:
    state = ServerState(settings=Settings(time_scale=1.0), fixture=load_fixture(), clock=FakeClock(start=0.0))
    first = reply_sources(state)
    patched = state.fixture.model_copy()
    state.restore((state.settings, patched))  # what a reset, a patch or a preset does
    second = reply_sources(state)
    assert second is not first and second.writer.fixture is patched
    state.restore((state.settings.with_overrides(time_scale=0.5), patched))
    third = reply_sources(state)
    assert third is not second and third.writer.time_scale == 0.5


def test_another_server_gets_its_own_view() -> None:
    one = ServerState(settings=Settings(time_scale=1.0), fixture=load_fixture(), clock=FakeClock(start=0.0))
    other = ServerState(settings=Settings(time_scale=1.0), fixture=one.fixture, clock=FakeClock(start=0.0))
    assert reply_sources(one).clock is one.clock
    sources = reply_sources(other)
    assert sources.clock is other.clock and sources.sequences is other.script_state
