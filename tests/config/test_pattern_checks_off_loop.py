"""The event loop never waits for a backtracking pattern check: the reply that needs one is planned
in a thread, and ``/health`` and other replies go on meanwhile. The checking process bounds itself."""

from __future__ import annotations

import os
import threading
import time

import httpx
import pytest

from mockserver import MockServer
from mockserver.config import patterns
from mockserver.config.patterns import CHECKER_SEARCH_LIMIT_S, PatternChecker, PatternTooSlow

PREVIEW = {"authorization": "Bearer sk-mock-preview"}
BACKREFERENCE = r"^(ab)\1$"


def structured(url: str, pattern: str) -> httpx.Response:
    schema = {
        "type": "object",
        "properties": {"code": {"type": "string", "pattern": pattern}},
        "required": ["code"],
        "additionalProperties": False,
    }
    body = {
        "model": "gpt-5.6-mini",
        "messages": [{"role": "user", "content": "x"}],
        "response_format": {"type": "json_schema", "json_schema": {"name": "c", "schema": schema, "strict": True}},
    }
    return httpx.post(f"{url}/v1/chat/completions", json=body, headers=PREVIEW, timeout=30)


class HeldChecker(PatternChecker):
    """A checker whose searches wait until the test lets them go: a check that takes its time."""

    def __init__(self) -> None:
        super().__init__(budget=30)
        self.entered = threading.Event()
        self.release = threading.Event()
        self.threads: list[str] = []

    def search(self, source: str, text: str) -> bool:
        self.threads.append(threading.current_thread().name)
        self.entered.set()
        self.release.wait(30)
        return super().search(source, text)


def test_health_answers_while_a_pattern_check_is_waited_for(monkeypatch: pytest.MonkeyPatch) -> None:
    held = HeldChecker()
    monkeypatch.setattr(patterns, "CHECKER", held)
    replies: list[httpx.Response] = []
    with MockServer(time_scale=0, seed=1) as server:
        asking = threading.Thread(target=lambda: replies.append(structured(server.url, BACKREFERENCE)))
        asking.start()
        try:
            assert held.entered.wait(10), "the reply never reached its pattern check"
            # Before, the loop itself waited in the check: /health hung until the check ended.
            health = httpx.get(f"{server.url}/health", timeout=5)
            assert health.status_code == 200
            assert structured(server.url, "^[a-z]{3}$").status_code == 200  # an RE2 pattern is not held up
        finally:
            held.release.set()
            asking.join(30)
            held.close()
    assert replies and replies[0].status_code == 200, replies
    assert replies[0].json()["choices"][0]["message"]["content"] == '{"code":"abab"}'
    assert held.threads and all(name.startswith("pattern-checks") for name in held.threads)


def test_a_check_past_its_budget_is_still_a_clear_400(monkeypatch: pytest.MonkeyPatch) -> None:
    checker = PatternChecker(budget=0.05)
    monkeypatch.setattr(patterns, "CHECKER", checker)
    try:
        with MockServer(time_scale=0, seed=1) as server:
            reply = structured(server.url, "^(?!(a+)+b)a{40}$")
            assert reply.status_code == 400, reply.text
            assert reply.json()["error"]["param"] == "response_format.json_schema.schema"
            assert "took longer than" in reply.json()["error"]["message"]
    finally:
        checker.close()


def test_the_checking_process_ends_its_own_endless_search() -> None:
    """A search the server no longer waits for (the server killed) ends within the process's own limit."""
    checker = PatternChecker(budget=CHECKER_SEARCH_LIMIT_S + 5)
    try:
        started = time.monotonic()
        with pytest.raises(PatternTooSlow):
            checker.search("^(?!(a+)+b)a{40}$", "a" * 40)  # hours of backtracking without the alarm
        assert time.monotonic() - started < CHECKER_SEARCH_LIMIT_S + 4
        assert checker.search(BACKREFERENCE, "abab")  # a new process answers the next one
    finally:
        checker.close()


def test_closing_the_checker_leaves_no_process() -> None:
    checker = PatternChecker()
    assert checker.search(BACKREFERENCE, "abab")
    process = checker._process
    assert process is not None and process.poll() is None
    checker.close()
    assert process.returncode is not None  # killed and reaped: no zombie either
    with pytest.raises(ProcessLookupError):
        os.kill(process.pid, 0)
