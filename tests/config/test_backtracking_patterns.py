"""A request schema ``pattern`` that RE2 cannot run (backreferences, lookaround) still works, checked
in a process of its own; only one whose check runs past the budget gets a clear 400, at once."""

from __future__ import annotations

import re
import time

import httpx
import pytest

from mockserver import MockServer
from mockserver.config.patterns import CHECK_BUDGET_S, PatternChecker, PatternTooSlow, within_budget

PREVIEW = {"authorization": "Bearer sk-mock-preview"}
# Lookaround RE2 refuses; on the forty a's the generator makes, Python's re backtracks for hours.
EXPONENTIAL = "^(?!(a+)+b)a{40}$"
BACKREFERENCE = r"^(ab)\1$"


def structured(server: MockServer, pattern: str) -> httpx.Response:
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
    return httpx.post(f"{server.url}/v1/chat/completions", json=body, headers=PREVIEW, timeout=30)


def test_a_pattern_only_python_can_run_still_gives_matching_strings(server: MockServer) -> None:
    reply = structured(server, BACKREFERENCE)
    assert reply.status_code == 200, reply.text
    assert reply.json()["choices"][0]["message"]["content"] == '{"code":"abab"}'


def test_a_pattern_whose_check_runs_past_its_budget_gets_a_400_at_once(server: MockServer) -> None:
    started = time.monotonic()
    reply = structured(server, EXPONENTIAL)
    assert time.monotonic() - started < 10, "the check ran past its budget"
    assert reply.status_code == 400, reply.text
    message = reply.json()["error"]["message"]
    assert "took longer than" in message and "RE2" in message
    assert httpx.get(f"{server.url}/health").status_code == 200
    again = time.monotonic()
    assert structured(server, EXPONENTIAL).status_code == 400  # remembered: refused without a second wait
    assert time.monotonic() - again < 5
    assert structured(server, BACKREFERENCE).status_code == 200  # the checker came back for the others


def test_the_checker_kills_a_search_at_its_budget_and_starts_again() -> None:
    checker = PatternChecker(budget=CHECK_BUDGET_S)
    try:
        assert checker.search(BACKREFERENCE, "abab") and not checker.search(BACKREFERENCE, "abac")
        started = time.monotonic()
        with pytest.raises(PatternTooSlow, match=re.escape(EXPONENTIAL)):
            checker.search(EXPONENTIAL, "a" * 40)
        assert time.monotonic() - started < 2
        with pytest.raises(PatternTooSlow):
            checker.search(EXPONENTIAL, "b")  # remembered as too slow
        assert checker.search(r"(?<=a)b", "ab")
    finally:
        checker.close()


def test_the_searches_for_one_value_share_one_budget() -> None:
    checker = PatternChecker()
    try:
        with within_budget(0.0), pytest.raises(PatternTooSlow):
            checker.search(BACKREFERENCE, "abab")  # the value's budget is spent: refused
        assert checker.search(BACKREFERENCE, "abab")  # not held against the pattern, which is quick
    finally:
        checker.close()
