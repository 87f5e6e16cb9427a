"""The Ultrafast preview capacity through the official SDK: rejection, retries, downgrade, an exact cap
under concurrency, and slots released when replies end or clients leave."""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Any

import httpx
import openai
import pytest

from mockserver import MockServer
from tests.support import INSTANT, MESSAGES, Attempts, fixture, sdk

ULTRAFAST = "gpt-5.6-sol-ultrafast"
# Slow an Ultrafast reply down to ~0.5 s on a real-time server, so requests overlap.
SLOW = {"x-mock-tokens-per-second": "40", "x-mock-ttft-ms": "0", "x-mock-output-tokens": "20"}


def capacity(**policy: Any) -> dict[str, Any]:
    return {"ultrafast_concurrency": 3, "when_full": "reject", "reject_status": 429, "retry_after_ms": 1000, **policy}


def usage(server: MockServer, **params: str) -> dict[str, Any]:
    report: dict[str, Any] = httpx.get(f"{server.url}/_mock/usage", params=params).json()
    return report


def test_full_capacity_is_a_retryable_429_that_the_sdk_retries_after_retry_after() -> None:
    # Time scale 1, so retry-after-ms is the fixture's 40 ms; the replies themselves are instant.
    with (
        MockServer(
            time_scale=1, fixture=fixture(capacity=capacity(ultrafast_concurrency=0, retry_after_ms=40))
        ) as server,
        sdk(server, max_retries=2, default_headers=INSTANT) as client,
    ):
        attempts = Attempts(server)
        with pytest.raises(openai.RateLimitError) as caught:
            client.chat.completions.create(model=ULTRAFAST, messages=MESSAGES)
        error = caught.value
        assert (error.code, error.param) == ("rate_limit_exceeded", "service_tier")
        assert "The ultrafast service tier is at capacity for model `gpt-5.6-sol-ultrafast`" in error.message
        headers = error.response.headers
        assert (headers["retry-after-ms"], headers["retry-after"], headers["x-should-retry"]) == ("40", "1", "true")
        assert [(a.status, a.retry_count) for a in attempts] == [(429, "0"), (429, "1"), (429, "2")]
        assert all(0.03 <= gap < 0.3 for gap in attempts.gaps())  # retry-after-ms, not the SDK's 0.375 s+ backoff
        # Other tiers are not limited by the Ultrafast capacity.
        assert client.chat.completions.create(model="gpt-5.6-sol", messages=MESSAGES).service_tier == "default"


def test_full_capacity_can_answer_503() -> None:
    fx = fixture(capacity=capacity(ultrafast_concurrency=0, reject_status=503))
    with MockServer(time_scale=0, fixture=fx) as server, sdk(server) as client:
        with pytest.raises(openai.InternalServerError) as caught:
            client.chat.completions.create(
                model="gpt-5.6-sol", messages=MESSAGES, extra_body={"service_tier": "ultrafast"}
            )
        error = caught.value
        assert (error.status_code, error.code, error.type, error.param) == (
            503, "server_is_overloaded", "service_unavailable_error", "service_tier")  # fmt: skip
        assert error.response.headers["x-should-retry"] == "true"


@pytest.mark.parametrize("model", [ULTRAFAST, "gpt-5.6-sol"])
def test_full_capacity_downgrades_by_policy_and_says_so(model: str) -> None:
    fx = fixture(capacity=capacity(ultrafast_concurrency=0, when_full="downgrade"))
    with MockServer(time_scale=0, fixture=fx) as server, sdk(server) as client:
        completion = client.chat.completions.create(
            model=model, messages=MESSAGES, max_tokens=5, extra_body={"service_tier": "ultrafast"}
        )
        assert completion.service_tier == "default"
        assert list(usage(server)["by_tier"]) == ["default"]


def run_together(server: MockServer, count: int) -> Counter[str]:
    """``count`` Ultrafast requests at once, two streams for every non-streaming one.

    Returns the outcomes: the service tier each reply reported, or the error code. The server
    counts the slots in flight itself, and reports the peak at ``/_mock/usage``.
    """
    outcomes: Counter[str] = Counter()
    lock = threading.Lock()
    start = threading.Barrier(count)

    def one(index: int) -> None:
        with sdk(server) as client:
            start.wait()
            try:
                if index % 3:
                    stream = client.chat.completions.create(
                        model=ULTRAFAST, messages=MESSAGES, stream=True, extra_headers=SLOW
                    )
                    outcome = {chunk.service_tier for chunk in stream}.pop()
                else:
                    reply = client.chat.completions.create(model=ULTRAFAST, messages=MESSAGES, extra_headers=SLOW)
                    outcome = reply.service_tier
            except openai.RateLimitError as error:
                outcome = error.code
            with lock:
                outcomes[str(outcome)] += 1

    threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    return outcomes


def test_the_cap_is_exact_under_concurrency() -> None:
    with MockServer(time_scale=1, fixture=fixture(capacity=capacity())) as server:
        outcomes = run_together(server, 12)
        report = usage(server)
        assert report["capacity"]["ultrafast_peak"] == 3  # reached, never exceeded
        assert report["capacity"]["ultrafast_in_flight"] == 0  # every slot came back
        # Ultrafast on Chat is reported as "priority" (Policies.chat_ultrafast_service_tier).
        assert outcomes["priority"] >= 3 and outcomes["rate_limit_exceeded"] >= 1
        assert sum(outcomes.values()) == 12
        assert report["by_tier"]["ultrafast"]["requests"] == outcomes["priority"]


def test_past_the_cap_requests_are_downgraded_and_all_served() -> None:
    with MockServer(time_scale=1, fixture=fixture(capacity=capacity(when_full="downgrade"))) as server:
        outcomes = run_together(server, 12)
        report = usage(server)
        assert report["capacity"]["ultrafast_peak"] == 3
        assert set(outcomes) == {"priority", "default"} and sum(outcomes.values()) == 12
        assert report["by_tier"]["default"]["requests"] == outcomes["default"]
        assert report["by_tier"]["ultrafast"]["requests"] == outcomes["priority"]


def wait_until_idle(server: MockServer, timeout: float = 2.0) -> int:
    deadline = time.monotonic() + timeout
    while (busy := usage(server)["capacity"]["ultrafast_in_flight"]) and time.monotonic() < deadline:
        time.sleep(0.01)
    return int(busy)


def test_a_client_leaving_mid_stream_releases_its_slot_and_is_not_billed() -> None:
    slow = {**SLOW, "x-mock-tokens-per-second": "10", "x-mock-output-tokens": "50"}  # 5 s if read to the end
    with MockServer(time_scale=1) as server, sdk(server) as client:
        stream = client.chat.completions.create(model=ULTRAFAST, messages=MESSAGES, stream=True, extra_headers=slow)
        next(iter(stream))
        assert usage(server)["capacity"]["ultrafast_in_flight"] == 1
        stream.close()
        assert wait_until_idle(server) == 0
        assert usage(server)["totals"]["requests"] == 0


def test_the_organization_cap_holds_beside_the_server_cap() -> None:
    with MockServer(time_scale=1) as server, sdk(server, "sk-mock-preview-solo") as solo, sdk(server) as other:
        stream = solo.chat.completions.create(model=ULTRAFAST, messages=MESSAGES, stream=True, extra_headers=SLOW)
        next(iter(stream))
        with pytest.raises(openai.RateLimitError) as caught:
            solo.chat.completions.create(model=ULTRAFAST, messages=MESSAGES, max_tokens=3)
        assert caught.value.param == "service_tier"
        # Another organization still gets Ultrafast while org-mock-solo is at its cap of 1.
        assert (
            other.chat.completions.create(model=ULTRAFAST, messages=MESSAGES, max_tokens=3).service_tier == "priority"
        )
        stream.close()
        assert wait_until_idle(server) == 0
