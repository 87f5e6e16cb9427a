"""The control plane (/_mock/) is closed to browsers on other origins always, and to anyone
without the admin token when the server listens beyond loopback."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from mockserver import MockServer
from mockserver.cli import main
from mockserver.config.fixture import ConfigError
from mockserver.config.settings import Settings
from mockserver.server.app import create_app

TOKEN = "admin-secret-for-tests"


@pytest.fixture(scope="module")
def open_server() -> Iterator[MockServer]:
    with MockServer(time_scale=0) as running:
        yield running


@pytest.fixture(scope="module")
def guarded() -> Iterator[MockServer]:
    with MockServer(time_scale=0, admin_token=TOKEN) as running:
        yield running


@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", "/_mock/reset"), ("PATCH", "/_mock/config"), ("GET", "/_mock/requests"), ("GET", "/_mock/usage")],
)
def test_cross_origin_browser_requests_are_refused(open_server: MockServer, method: str, path: str) -> None:
    for headers in ({"origin": "http://evil.example"}, {"sec-fetch-site": "cross-site"}, {"origin": "null"}):
        reply = httpx.request(method, f"{open_server.url}{path}", headers=headers, json={})
        assert reply.status_code == 403, (headers, reply.text)
        assert reply.json()["error"]["code"] == "cross_origin_control_plane"
        assert "access-control-allow-origin" not in reply.headers


def test_a_cross_origin_preflight_gets_no_cors_grant(open_server: MockServer) -> None:
    reply = httpx.options(
        f"{open_server.url}/_mock/config",
        headers={"origin": "http://evil.example", "access-control-request-method": "PATCH"},
    )
    assert reply.status_code == 403 and "access-control-allow-origin" not in reply.headers


def test_same_origin_and_non_browser_clients_are_served(open_server: MockServer) -> None:
    assert httpx.get(f"{open_server.url}/_mock/config").status_code == 200
    same = {"origin": open_server.url, "sec-fetch-site": "same-origin"}
    assert httpx.get(f"{open_server.url}/_mock/config", headers=same).status_code == 200


def test_the_inference_api_is_not_affected_by_origin(open_server: MockServer) -> None:
    reply = httpx.get(
        f"{open_server.url}/v1/models",
        headers={"origin": "http://evil.example", "authorization": "Bearer sk-mock-preview"},
    )
    assert reply.status_code == 200


def test_with_a_token_the_control_plane_requires_it(guarded: MockServer) -> None:
    url = f"{guarded.url}/_mock/config"
    refused = httpx.get(url)
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "admin_token_required"
    assert httpx.get(url, headers={"authorization": "Bearer wrong"}).status_code == 401
    assert httpx.get(url, headers={"authorization": f"Bearer {TOKEN}"}).status_code == 200
    assert httpx.get(url, headers={"x-mock-admin-token": TOKEN}).status_code == 200
    assert httpx.post(f"{guarded.url}/_mock/reset").status_code == 401
    assert httpx.get(f"{guarded.url}/health").status_code == 200  # only /_mock/ is guarded


def test_beyond_loopback_a_token_is_required_to_start() -> None:
    with pytest.raises(ConfigError, match="admin token"):
        create_app(Settings(host="0.0.0.0"))
    with pytest.raises(ConfigError, match="admin token"):
        MockServer(host="192.168.1.20")
    Settings(host="0.0.0.0", admin_token=TOKEN).check_control_plane()
    Settings(host="0.0.0.0", insecure_control_plane=True).check_control_plane()
    for loopback in ("127.0.0.1", "localhost", "::1", "127.0.0.2", "[::1]"):
        Settings(host=loopback).check_control_plane()


def test_the_cli_refuses_to_start_beyond_loopback_without_a_token(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--host", "0.0.0.0", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert "--admin-token" in err and "--insecure-control-plane" in err


def test_a_flag_supplies_the_token_a_variable_lacks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MOCKSERVER_HOST", "0.0.0.0")
    assert Settings.from_env().host == "0.0.0.0"  # reading the variables alone is not refused


def test_the_token_is_read_from_the_environment() -> None:
    settings = Settings.from_env({"MOCKSERVER_ADMIN_TOKEN": TOKEN, "MOCKSERVER_INSECURE_CONTROL_PLANE": "true"})
    assert settings.admin_token == TOKEN and settings.insecure_control_plane


def test_a_generated_token_guards_the_control_plane(tmp_path: object) -> None:
    import subprocess
    import sys
    import time

    proc = subprocess.Popen(
        [sys.executable, "-m", "mockserver", "serve", "--host", "0.0.0.0", "--port", "0", "--admin-token", "generate"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        token = url = None
        deadline = time.monotonic() + 20
        assert proc.stderr is not None
        while (token is None or url is None) and time.monotonic() < deadline:
            line = proc.stderr.readline()
            if "admin token (generated" in line:
                token = line.rsplit(" ", 1)[1].strip()
            if "http://" in line and url is None:
                url = "http://127.0.0.1:" + line.split("http://", 1)[1].split(":", 1)[1].split("/", 1)[0]
        assert token and url, "no token or address in the start-up output"
        assert httpx.get(f"{url}/_mock/config").status_code == 401
        assert httpx.get(f"{url}/_mock/config", headers={"x-mock-admin-token": token}).status_code == 200
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        assert proc.stderr is not None
        proc.stderr.close()
