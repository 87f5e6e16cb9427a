"""Refusals a test can tell apart, and that cost no time at time scale 0, through the official SDKs.

The capacity 429 and a rate-limit 429 both say ``rate_limit_exceeded``, as the live API does; only
``param: "service_tier"`` tells them apart. The journal keeps each refusal's ``type``, ``code`` and
``param`` and filters on them, and the waits the refusals ask for follow the time scale.
"""

from __future__ import annotations

import time

import anthropic
import httpx
import openai
import pytest

from mockserver import MockServer
from tests.support import MESSAGES, Attempts, fixture, sdk

ULTRAFAST = "gpt-5.6-sol-ultrafast"
FULL = {"ultrafast_concurrency": 0, "when_full": "reject", "reject_status": 429, "retry_after_ms": 1000}
ONE_PER_MINUTE = {"key": "sk-one-rpm", "organization": "org-one-rpm", "rate_limits": {"rpm": 1}}


def test_an_sdk_retry_loop_on_a_full_capacity_costs_only_the_sdks_time_at_time_scale_0() -> None:
    with MockServer(time_scale=0, fixture=fixture(capacity=FULL)) as server, sdk(server, max_retries=2) as client:
        attempts = Attempts(server)
        started = time.perf_counter()
        with pytest.raises(openai.RateLimitError) as caught:
            client.responses.create(model=ULTRAFAST, input="Hello")
        elapsed = time.perf_counter() - started
        headers = caught.value.response.headers
        assert headers["retry-after-ms"] == "1"  # capacity.retry_after_ms (1,000) x time scale 0, floored at 1 ms
        assert "Please try again in 1ms" in caught.value.message
        assert [(a.status, a.retry_count) for a in attempts] == [(429, "0"), (429, "1"), (429, "2")]
        assert elapsed < 0.3  # was 2.06 s when retry-after-ms stayed at 1,000


def test_the_capacity_wait_is_scaled_not_replaced() -> None:
    with MockServer(time_scale=0.5, fixture=fixture(capacity=FULL)) as server, sdk(server) as client:
        with pytest.raises(openai.RateLimitError) as caught:
            client.chat.completions.create(model=ULTRAFAST, messages=MESSAGES)
        assert caught.value.response.headers["retry-after-ms"] == "500"


def test_a_rate_limit_429_asks_for_no_wait_at_time_scale_0() -> None:
    with (
        MockServer(time_scale=0, fixture=fixture(keys=[ONE_PER_MINUTE])) as server,
        sdk(server, "sk-one-rpm", max_retries=2) as client,
    ):
        client.chat.completions.create(model="gpt-5.6-sol", messages=MESSAGES)
        started = time.perf_counter()
        with pytest.raises(openai.RateLimitError) as caught:
            client.chat.completions.create(model="gpt-5.6-sol", messages=MESSAGES)
        assert time.perf_counter() - started < 0.3
        assert (caught.value.response.headers["retry-after-ms"], caught.value.response.headers["retry-after"]) == (
            "1",
            "1",
        )
        assert "Please try again in 1ms" in caught.value.message


def test_the_journal_tells_a_capacity_429_from_a_rate_limit_429() -> None:
    fx = fixture(capacity=FULL, keys=[ONE_PER_MINUTE])
    with MockServer(time_scale=0, fixture=fx) as server:
        with sdk(server) as preview, sdk(server, "sk-one-rpm") as limited:
            with pytest.raises(openai.RateLimitError):
                preview.responses.create(model=ULTRAFAST, input="Hello")
            limited.responses.create(model="gpt-5.6-sol", input="Hello")
            with pytest.raises(openai.RateLimitError):
                limited.responses.create(model="gpt-5.6-sol", input="Hello")
            with pytest.raises(openai.NotFoundError):
                limited.responses.create(model=ULTRAFAST, input="Hello")

        calls = server.requests
        capacity = calls.assert_called_once(code="rate_limit_exceeded", param="service_tier")
        assert (capacity.status, capacity.error_type, capacity.model) == (429, "requests", ULTRAFAST)
        rate_limit = calls.assert_called_once(code="rate_limit_exceeded", param=None)
        assert (rate_limit.status, rate_limit.error_type, rate_limit.param) == (429, "requests", None)
        assert calls.assert_called_once(code="model_not_found").status == 404
        served = calls.assert_called_once(status=200)
        assert (served.error_type, served.code, served.param) == (None, None, None)

        def journal(**params: str) -> list[dict[str, object]]:
            data: list[dict[str, object]] = httpx.get(f"{server.url}/_mock/requests", params=params).json()["data"]
            return data

        refusals = journal(code="rate_limit_exceeded")
        assert [(e["status"], e["param"]) for e in refusals] == [(429, "service_tier"), (429, None)]
        assert [e["key"] for e in journal(param="service_tier")] == [capacity.key]
        assert len(journal(error_type="requests")) == 2
        assert journal(code="no_such_code") == []


def test_the_journal_keeps_an_anthropic_refusal_in_anthropics_type() -> None:
    with MockServer(time_scale=0, presets=["claude-opus-4.8-fast"]) as server:
        client = anthropic.Anthropic(base_url=server.url, api_key="sk-mock-preview", max_retries=0)
        with client, pytest.raises(anthropic.NotFoundError):
            client.messages.create(
                model="claude-no-such-model", max_tokens=10, messages=[{"role": "user", "content": "Hi"}]
            )
        entry = server.requests.assert_called_once(status=404)
        assert (entry.error_type, entry.code) == ("not_found_error", "model_not_found")
