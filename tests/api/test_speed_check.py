"""``POST /_mock/speed-check`` refused: each reason with its own code and a message that says what to do."""

from __future__ import annotations

import httpx

from mockserver import MockServer
from mockserver.harness.live.speed_check import GENERATION_S
from tests.conftest import fixture_with


def test_a_second_check_while_one_runs_is_a_409_speed_check_running() -> None:
    with MockServer(time_scale=1, seed=3) as server:
        started = httpx.post(f"{server.url}/_mock/speed-check")
        assert started.status_code == 202 and started.json()["running"] is True
        again = httpx.post(f"{server.url}/_mock/speed-check")
        assert again.status_code == 409
        error = again.json()["error"]
        assert (error["type"], error["code"], error["param"]) == ("invalid_request_error", "speed_check_running", None)
        assert error["message"].startswith("A speed check is already running on this server;")
        assert f"about {GENERATION_S:g} seconds" in error["message"]
        server.reset()  # ends the check's streams


def test_a_check_with_no_key_to_use_is_a_409_nothing_to_speed_check() -> None:
    revoked = [{"key": "sk-mock-revoked", "status": "revoked", "tiers": ["default"]}]
    with MockServer(time_scale=0, fixture=fixture_with(accounts=revoked)) as server:
        refused = httpx.post(f"{server.url}/_mock/speed-check")
        assert refused.status_code == 409
        error = refused.json()["error"]
        assert (error["type"], error["code"]) == ("invalid_request_error", "nothing_to_speed_check")
        assert "an active API key allowed to use it" in error["message"]
        assert not server.state.speed_check.running and server.state.speed_check.shown() is None
