"""The same request says the same thing streamed or not, on both APIs, with and without ``seed``."""

from __future__ import annotations

from typing import Any

import httpx
import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockserver import MockServer
from mockserver.engine import generation
from tests.conftest import PREVIEW_KEY

prompts = st.text(alphabet=st.sampled_from("abcdefghij klmnop,.?写一篇故事你好"), min_size=1, max_size=40).filter(
    str.strip
)
seeds = st.one_of(st.none(), st.integers(min_value=0, max_value=2**31))
limits = st.one_of(st.none(), st.integers(min_value=16, max_value=300))  # the Responses API's floor is 16
tiers = st.sampled_from([None, "default", "priority", "flex"])


def _sse_data(response: httpx.Response) -> list[dict[str, Any]]:
    return [orjson.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: {")]


def _chat(http: httpx.Client, body: dict[str, Any]) -> tuple[str, str]:
    whole = http.post("/v1/chat/completions", json=body).json()
    streamed = http.post(
        "/v1/chat/completions", json={**body, "stream": True, "stream_options": {"include_usage": True}}
    )
    chunks = _sse_data(streamed)
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert chunks[-1]["usage"]["completion_tokens"] == whole["usage"]["completion_tokens"]
    return whole["choices"][0]["message"]["content"], text


def _responses(http: httpx.Client, body: dict[str, Any]) -> tuple[str, str]:
    whole = http.post("/v1/responses", json=body).json()
    events = _sse_data(http.post("/v1/responses", json={**body, "stream": True}))
    text = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
    assert events[-1]["response"]["usage"] == whole["usage"]
    return whole["output"][-1]["content"][0]["text"], text


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prompt=prompts, seed=seeds, limit=limits, tier=tiers)
def test_chat_streamed_and_whole_replies_are_identical(
    server: MockServer, prompt: str, seed: int | None, limit: int | None, tier: str | None
) -> None:
    body: dict[str, Any] = {"model": "gpt-5.6-sol", "messages": [{"role": "user", "content": prompt}]}
    for name, value in (("seed", seed), ("max_completion_tokens", limit), ("service_tier", tier)):
        if value is not None:
            body[name] = value
    with httpx.Client(base_url=server.url, headers={"authorization": f"Bearer {PREVIEW_KEY}"}) as http:
        whole, streamed = _chat(http, body)
    assert whole == streamed and whole


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prompt=prompts, seed=seeds, limit=limits, tier=tiers)
def test_responses_streamed_and_whole_replies_are_identical(
    server: MockServer, prompt: str, seed: int | None, limit: int | None, tier: str | None
) -> None:
    body: dict[str, Any] = {"model": "gpt-5.6-sol", "input": prompt, "reasoning": {"effort": "none"}}
    for name, value in (("seed", seed), ("max_output_tokens", limit), ("service_tier", tier)):
        if value is not None:
            body[name] = value
    with httpx.Client(base_url=server.url, headers={"authorization": f"Bearer {PREVIEW_KEY}"}) as http:
        whole, streamed = _responses(http, body)
    assert whole == streamed


def test_the_content_seed_ignores_only_delivery_fields() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
    delivered = {**body, "stream": True, "stream_options": {"include_usage": True}, "store": True}
    assert generation.request_seed(body, 3) == generation.request_seed(delivered, 3)
    assert generation.request_seed(body, 3) != generation.request_seed({**body, "temperature": 0.5}, 3)
