"""Regular expressions from fixtures and requests run in linear time: none can stall the server."""

from __future__ import annotations

import threading
import time

import httpx
import pytest
from pydantic import ValidationError

from mockserver import MockServer
from mockserver.config.faults import FaultMatch
from mockserver.config.patterns import compile_pattern
from mockserver.config.script_rules import ScriptMatch

PREVIEW = {"authorization": "Bearer sk-mock-preview"}
CATASTROPHIC = "^(a+)+$"  # exponential in a backtracking engine on 'aaa...a!'
HOSTILE_TEXT = "a" * 40 + "!"  # ~2**40 steps for `re`: hours


def _ask(server: MockServer, text: str) -> httpx.Response:
    body = {"model": "gpt-5.6-mini", "messages": [{"role": "user", "content": text}]}
    return httpx.post(f"{server.url}/v1/chat/completions", json=body, headers=PREVIEW, timeout=10)


def _health_while(server: MockServer, work: threading.Thread) -> float:
    """The slowest /health reply while ``work`` runs: the event loop's responsiveness."""
    work.start()
    slowest = 0.0
    while work.is_alive():
        started = time.monotonic()
        httpx.get(f"{server.url}/health", timeout=10)
        slowest = max(slowest, time.monotonic() - started)
    work.join()
    return slowest


def test_a_catastrophic_fault_rule_regex_does_not_stall(server: MockServer) -> None:
    server.configure(faults={"rules": [{"match": {"message": CATASTROPHIC}, "fault": "status=503"}]})
    try:
        replies: list[httpx.Response] = []
        work = threading.Thread(target=lambda: replies.extend(_ask(server, HOSTILE_TEXT) for _ in range(5)))
        assert _health_while(server, work) < 1.0
        assert [r.status_code for r in replies] == [200] * 5
        assert _ask(server, "aaaa").status_code == 503  # the rule still matches what it should
    finally:
        server.reset()


def test_a_catastrophic_script_regex_does_not_stall(server: MockServer) -> None:
    server.configure(scripts=[{"match": {"message": CATASTROPHIC}, "reply": {"text": "matched"}}])
    try:
        replies: list[httpx.Response] = []
        work = threading.Thread(target=lambda: replies.extend(_ask(server, HOSTILE_TEXT) for _ in range(5)))
        assert _health_while(server, work) < 1.0
        assert all(r.status_code == 200 for r in replies)
        assert _ask(server, "aaaa").json()["choices"][0]["message"]["content"] == "matched"
    finally:
        server.reset()


@pytest.mark.parametrize("model", [FaultMatch, ScriptMatch])
def test_fixture_regexes_are_checked_at_load_time(model: type[FaultMatch]) -> None:
    with pytest.raises(ValidationError, match="backreferences"):
        model.model_validate({"message": r"(a)\1"})
    with pytest.raises(ValidationError, match="lookaround"):
        model.model_validate({"message": "(?=a)b"})
    assert model.model_validate({"message": "(?i)^hello"}).message == "(?i)^hello"


def test_a_patch_with_an_unsupported_regex_is_a_400(server: MockServer) -> None:
    reply = httpx.patch(
        f"{server.url}/_mock/config", json={"faults": {"rules": [{"match": {"message": "(a)\\1"}, "fault": "503"}]}}
    )
    assert reply.status_code == 400
    assert "linear-time" in reply.json()["error"]["message"]


def test_compiled_patterns_are_cached_and_linear() -> None:
    assert compile_pattern(CATASTROPHIC) is compile_pattern(CATASTROPHIC)
    started = time.monotonic()
    assert compile_pattern(CATASTROPHIC).search("a" * 100_000 + "!") is None
    assert time.monotonic() - started < 0.5


def test_a_schema_pattern_from_a_request_cannot_stall(server: MockServer) -> None:
    schema = {
        "type": "object",
        "properties": {"code": {"type": "string", "pattern": "^(a|aa)+$"}},
        "required": ["code"],
        "additionalProperties": False,
    }
    body = {
        "model": "gpt-5.6-mini",
        "messages": [{"role": "user", "content": "x"}],
        "response_format": {"type": "json_schema", "json_schema": {"name": "c", "schema": schema, "strict": True}},
    }
    started = time.monotonic()
    reply = httpx.post(f"{server.url}/v1/chat/completions", json=body, headers=PREVIEW, timeout=10)
    assert reply.status_code == 200 and time.monotonic() - started < 2
