"""Hostile bodies: too deep, too large, or cut off. Each gets an OpenAI-shaped error, never a 500,
and the journal keeps answering afterwards."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mockserver import MockServer
from mockserver.config.settings import DEFAULT_MAX_JSON_DEPTH

PREVIEW = {"authorization": "Bearer sk-mock-preview"}
MESSAGES = [{"role": "user", "content": "hello"}]


pytestmark = pytest.mark.server(max_body_bytes=200_000)


@pytest.fixture
def http(server: MockServer) -> Iterator[httpx.Client]:
    server.reset()
    with httpx.Client(base_url=server.url, headers=PREVIEW, timeout=30) as client:
        yield client


DEEP = "__deep__"


def nested_object(depth: int) -> str:
    """A JSON schema ``depth`` objects deep, as text: too deep for the json modules to write."""
    return '{"type": "object", "properties": {"x": ' * depth + '{"type": "string"}' + "}}" * depth


def post(http: httpx.Client, path: str, body: dict[str, Any], deep: str) -> httpx.Response:
    """POST ``body`` with the ``"__deep__"`` string replaced by the ``deep`` JSON text."""
    content = json.dumps(body).replace(f'"{DEEP}"', deep)
    return http.post(path, content=content.encode(), headers={"content-type": "application/json"})


def deep_array(depth: int) -> str:
    return "[" * depth + "]" * depth


def assert_too_deep(reply: httpx.Response) -> None:
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert error["type"] == "invalid_request_error" and error["code"] == "json_too_deep"
    assert f"{DEFAULT_MAX_JSON_DEPTH} levels" in error["message"]


@pytest.mark.parametrize("depth", [260, 600])
def test_a_deep_json_schema_is_refused_not_a_500(http: httpx.Client, depth: int) -> None:
    body = {
        "model": "gpt-5.6-mini",
        "messages": MESSAGES,
        "response_format": {"type": "json_schema", "json_schema": {"name": "deep", "schema": DEEP}},
    }
    assert_too_deep(post(http, "/v1/chat/completions", body, nested_object(depth)))


def test_deep_tool_parameters_are_refused(http: httpx.Client) -> None:
    tool = {"type": "function", "function": {"name": "f", "parameters": DEEP}}
    body = {"model": "gpt-5.6-mini", "messages": MESSAGES, "tools": [tool]}
    assert_too_deep(post(http, "/v1/chat/completions", body, nested_object(300)))


def test_a_deep_text_format_on_responses_is_refused(http: httpx.Client) -> None:
    text = {"format": {"type": "json_schema", "name": "deep", "schema": DEEP}}
    body = {"model": "gpt-5.6-mini", "input": "hi", "text": text}
    assert_too_deep(post(http, "/v1/responses", body, nested_object(300)))


def test_input_tokens_with_deep_input_is_refused(http: httpx.Client) -> None:
    text = {"format": {"type": "json_schema", "name": "deep", "schema": DEEP}}
    body = {"model": "gpt-5.6-mini", "input": "hi", "text": text}
    assert_too_deep(post(http, "/v1/responses/input_tokens", body, nested_object(999)))


def test_a_deep_config_patch_is_refused_and_changes_nothing(http: httpx.Client) -> None:
    before = http.get("/_mock/config").json()
    deep = '{"a": ' * 1000 + '"x"' + "}" * 1000
    for field in ("policies", "faults"):
        content = f'{{"{field}": {deep}}}'.encode()
        assert_too_deep(http.patch("/_mock/config", content=content, headers={"content-type": "application/json"}))
    assert http.get("/_mock/config").json() == before


def test_a_deep_array_body_leaves_the_journal_readable(http: httpx.Client) -> None:
    reply = http.post(
        "/v1/chat/completions", content=deep_array(500).encode(), headers={"content-type": "application/json"}
    )
    assert_too_deep(reply)
    journal = http.get("/_mock/requests")
    assert journal.status_code == 200, journal.text
    (entry,) = journal.json()["data"]
    assert entry["status"] == 400 and isinstance(entry["body"], str)


def test_beyond_the_parsers_own_limit_is_the_same_400(http: httpx.Client) -> None:
    reply = http.post(
        "/v1/chat/completions", content=deep_array(5000).encode(), headers={"content-type": "application/json"}
    )
    assert_too_deep(reply)
    assert http.get("/_mock/requests").status_code == 200


def test_depth_within_the_limit_is_served(http: httpx.Client) -> None:
    body = {
        "model": "gpt-5.6-mini",
        "messages": MESSAGES,
        "response_format": {"type": "json_schema", "json_schema": {"name": "ok", "schema": DEEP}},
    }
    assert post(http, "/v1/chat/completions", body, nested_object(5)).status_code == 200


def test_a_body_over_the_size_limit_gets_a_413(http: httpx.Client) -> None:
    body = {"model": "gpt-5.6-mini", "messages": [{"role": "user", "content": "x" * 300_000}]}
    reply = http.post("/v1/chat/completions", json=body)
    assert reply.status_code == 413, reply.text
    error = reply.json()["error"]
    assert error["type"] == "invalid_request_error" and error["code"] == "request_too_large"
    assert "200000 bytes" in error["message"]
    (entry,) = http.get("/_mock/requests").json()["data"]
    assert entry["status"] == 413 and entry["body"] is None


def test_a_chunked_body_over_the_size_limit_gets_a_413(http: httpx.Client) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"model": "gpt-5.6-mini", "messages": [{"role": "user", "content": "'
        for _ in range(30):
            yield b"x" * 10_000
        yield b'"}]}'

    reply = http.post("/v1/chat/completions", content=chunks(), headers={"content-type": "application/json"})
    assert reply.status_code == 413, reply.text
    assert reply.json()["error"]["code"] == "request_too_large"


def test_a_client_that_leaves_mid_body_is_a_499_not_an_error(
    server: MockServer, http: httpx.Client, caplog: pytest.LogCaptureFixture
) -> None:
    head = (
        "POST /v1/chat/completions HTTP/1.1\r\n"
        f"Host: {server.settings.host}\r\nAuthorization: Bearer sk-mock-preview\r\n"
        "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
    )
    with socket.create_connection((server.settings.host, server.port)) as sock:
        sock.sendall(head.encode() + b'{"model": "gpt-5.6-mini", "mess')
    deadline = time.monotonic() + 3
    while not server.requests and time.monotonic() < deadline:
        time.sleep(0.02)
    calls = server.requests
    assert [c.status for c in calls] == [499]
    assert calls[0].disconnected
    assert not [r for r in caplog.records if r.levelname == "ERROR"], [r.getMessage() for r in caplog.records]
