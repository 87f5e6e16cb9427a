"""Key, organization, quota and rate-limit refusals through the official SDK, and the headers of every reply."""

from __future__ import annotations

import re

import httpx
import openai
import pytest

from mockserver import MockServer
from tests.support import INSTANT, MESSAGES, Attempts, fixture, sdk

RATE_LIMIT_HEADERS = [
    f"x-ratelimit-{kind}-{unit}" for kind in ("limit", "remaining", "reset") for unit in ("requests", "tokens")
]
GO_DURATION = re.compile(r"^(\d+h)?(\d+m)?(\d+(\.\d+)?s|\d+ms)$")


@pytest.mark.parametrize(
    ("key", "options", "exception", "code"),
    [
        ("sk-mock-revoked", {}, openai.AuthenticationError, "invalid_api_key"),
        ("sk-mock-deactivated", {}, openai.AuthenticationError, "account_deactivated"),
        ("sk-mock-preview", {"organization": "org-someone-else"}, openai.AuthenticationError,
         "mismatched_organization"),
        ("sk-mock-preview", {"project": "proj_someone_else"}, openai.AuthenticationError, "mismatched_project"),
        ("sk-mock-region-blocked", {}, openai.PermissionDeniedError, "unsupported_country_region_territory"),
        ("sk-mock-mini-only", {}, openai.PermissionDeniedError, "model_not_found"),
    ],
)  # fmt: skip
def test_refusals_through_the_sdk(
    server: MockServer, key: str, options: dict[str, str], exception: type[openai.APIStatusError], code: str
) -> None:
    attempts = Attempts(server)
    with sdk(server, key, max_retries=2, **options) as client, pytest.raises(exception) as caught:
        client.chat.completions.create(model="gpt-5.6-sol", messages=MESSAGES)
    assert caught.value.code == code and caught.value.param is None
    assert len(attempts) == 1  # 401 and 403 are never retried


def test_live_wording_of_header_and_region_refusals(server: MockServer) -> None:
    with sdk(server, organization="org-x") as client, pytest.raises(openai.AuthenticationError) as org:
        client.models.list()
    assert org.value.message.endswith("OpenAI-Organization header should match organization for API key")
    with sdk(server, project="proj_x") as client, pytest.raises(openai.AuthenticationError) as project:
        client.models.list()
    assert project.value.message.endswith("OpenAI-Project header should match project for API key")
    with sdk(server, "sk-mock-region-blocked") as client, pytest.raises(openai.PermissionDeniedError) as region:
        client.models.list()
    assert region.value.message.endswith("Country, region, or territory not supported")
    assert region.value.type == "request_forbidden"


def test_matching_organization_and_project_headers_are_accepted(server: MockServer) -> None:
    with sdk(server, organization="org-mock-preview", project="proj_mock_preview") as client:
        reply = client.chat.completions.with_raw_response.create(model="gpt-5.6-sol", messages=MESSAGES, max_tokens=3)
    assert reply.headers["openai-organization"] == "org-mock-preview"
    assert reply.headers["openai-project"] == "proj_mock_preview"
    assert reply.parse().choices[0].message.content


@pytest.mark.parametrize(
    ("method", "path", "key", "body", "status"),
    [
        ("GET", "/v1/models", "sk-mock-preview", None, 200),
        ("POST", "/v1/chat/completions", "sk-mock-preview", {"model": "gpt-5.6-sol", "messages": MESSAGES}, 200),
        ("POST", "/v1/chat/completions", "sk-mock-preview", {"model": "nope", "messages": MESSAGES}, 404),
        ("POST", "/v1/chat/completions", "sk-mock-preview", {"model": "gpt-5.6-sol"}, 400),
        ("GET", "/v1/models", "sk-unknown-key-123456", None, 401),
        ("GET", "/v1/nowhere", "sk-mock-preview", None, 404),
    ],
)
def test_every_reply_carries_the_openai_headers(
    server: MockServer, method: str, path: str, key: str, body: object, status: int
) -> None:
    reply = httpx.request(method, server.url + path, json=body, headers={"authorization": f"Bearer {key}"})
    assert reply.status_code == status
    assert reply.headers["openai-version"] == "2020-10-01"
    assert int(reply.headers["openai-processing-ms"]) >= 0
    assert reply.headers["x-request-id"].startswith("req_")
    for name in RATE_LIMIT_HEADERS:
        assert name in reply.headers
    assert GO_DURATION.match(reply.headers["x-ratelimit-reset-requests"])
    assert GO_DURATION.match(reply.headers["x-ratelimit-reset-tokens"])
    known = status != 401
    assert ("openai-organization" in reply.headers) is known
    if known:
        assert reply.headers["openai-project"] == "proj_mock_preview"


def test_rate_limit_headers_count_down_through_a_burst_then_429() -> None:
    fx = fixture(keys=[{"key": "sk-burst", "organization": "org-burst", "rate_limits": {"rpm": 5, "tpm": 10_000}}])
    # Time scale 1, so retry-after-ms is the window's own wait; the replies themselves are instant.
    with MockServer(time_scale=1, fixture=fx) as server, sdk(server, "sk-burst", default_headers=INSTANT) as client:
        seen = []
        for _ in range(5):
            raw = client.chat.completions.with_raw_response.create(
                model="gpt-5.6-sol", messages=MESSAGES, max_tokens=100
            )
            seen.append(raw.headers)
        assert [h["x-ratelimit-remaining-requests"] for h in seen] == ["4", "3", "2", "1", "0"]
        assert all(h["x-ratelimit-limit-requests"] == "5" for h in seen)
        tokens = [int(h["x-ratelimit-remaining-tokens"]) for h in seen]
        assert tokens == sorted(tokens, reverse=True) and 10_000 - tokens[0] >= 100
        with pytest.raises(openai.RateLimitError) as caught:
            client.chat.completions.create(model="gpt-5.6-sol", messages=MESSAGES, max_tokens=100)
        error = caught.value
        assert (error.code, error.type, error.param) == ("rate_limit_exceeded", "requests", None)
        assert re.search(
            r"Rate limit reached for gpt-5.6-sol in organization org-burst on requests per min \(RPM\): "
            r"Limit 5, Used 5, Requested 1\. Please try again in 1[12](\.\d+)?s\. Visit https://platform\.openai\.com",
            error.message,
        )
        assert 11_000 <= int(error.response.headers["retry-after-ms"]) <= 12_000
        assert error.response.headers["x-ratelimit-remaining-requests"] == "0"


def test_the_sdk_waits_the_retry_after_of_a_token_limit_then_succeeds() -> None:
    # 60,000 TPM refill 1,000 tokens a second: a full window frees room for a small request in a fraction of a second.
    fx = fixture(keys=[{"key": "sk-tpm", "organization": "org-tpm", "rate_limits": {"tpm": 60_000}}])
    with (
        MockServer(time_scale=1, fixture=fx) as server,
        sdk(server, "sk-tpm", max_retries=2, default_headers=INSTANT) as client,
    ):
        client.chat.completions.create(model="gpt-5.6-sol", messages=MESSAGES, max_tokens=59_950)
        attempts = Attempts(server)
        # About 170 tokens over the limit: room comes back in about 170 ms.
        completion = client.chat.completions.create(model="gpt-5.6-sol", messages=MESSAGES, max_tokens=200)
        assert completion.choices[0].message.content
        assert [(a.status, a.retry_count) for a in attempts] == [(429, "0"), (200, "1")]
        # The SDK slept the server's retry-after-ms, not its own backoff (0.375 s or more).
        assert 0.1 <= attempts.gaps()[0] < 0.35


def test_insufficient_quota_is_not_retried() -> None:
    with MockServer(time_scale=0) as server, sdk(server, "sk-mock-tiny-quota", max_retries=2) as client:
        served = 0
        with pytest.raises(openai.RateLimitError) as caught:
            for _ in range(20):
                client.chat.completions.create(model="gpt-5.6-sol", messages=MESSAGES)
                served += 1
        assert served >= 1  # the budget covers a few replies, then runs out
        error = caught.value
        assert (error.code, error.type, error.param) == ("insufficient_quota", "insufficient_quota", None)
        assert error.response.headers["x-should-retry"] == "false"
        attempts = Attempts(server)
        with pytest.raises(openai.RateLimitError):
            client.chat.completions.create(model="gpt-5.6-sol", messages=MESSAGES)
        assert len(attempts) == 1
        spent = httpx.get(f"{server.url}/_mock/usage", params={"organization": "org-mock-tiny-quota"}).json()
        assert spent["totals"]["requests"] == served and spent["totals"]["cost_usd"] >= 0.005
