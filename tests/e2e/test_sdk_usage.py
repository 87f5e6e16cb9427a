"""The usage ledger at ``GET /_mock/usage`` equals what the clients were told, stream or not."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest
from openai.types import CompletionUsage

from mockserver import MockServer
from tests.support import MESSAGES, sdk

PRICES = {"default": 1.0, "priority": 2.0, "flex": 0.5, "ultrafast": 5.0}  # x $5 / $30 per M for gpt-5.6-sol


def report(server: MockServer, **params: str) -> dict[str, Any]:
    body: dict[str, Any] = httpx.get(f"{server.url}/_mock/usage", params=params).json()
    return body


def streamed_usage(client: openai.OpenAI, **request: Any) -> CompletionUsage:
    chunks = list(client.chat.completions.create(stream=True, stream_options={"include_usage": True}, **request))
    assert chunks[-1].usage is not None
    return chunks[-1].usage


def test_ledger_totals_equal_the_usage_blocks_received() -> None:
    received: list[tuple[str, CompletionUsage]] = []
    with MockServer(time_scale=0) as server, sdk(server) as client, sdk(server, "sk-mock-standard") as standard:
        plain = {"model": "gpt-5.6-sol", "messages": MESSAGES}
        for tier, extra in [
            ("default", {}),
            ("priority", {"service_tier": "priority"}),
            ("flex", {"service_tier": "flex"}),
            ("ultrafast", {"service_tier": "ultrafast"}),
        ]:
            completion = client.chat.completions.create(**plain, extra_body=extra, n=2, reasoning_effort="low")
            assert completion.usage is not None
            received.append((tier, completion.usage))
            received.append((tier, streamed_usage(client, **plain, extra_body=extra, max_completion_tokens=300)))
        received.append(("default", streamed_usage(standard, **plain)))
        with client.chat.completions.stream(**plain, stream_options={"include_usage": True}) as helper:
            final = helper.get_final_completion()
        assert final.usage is not None
        received.append(("default", final.usage))
        # Refused requests are not billed.
        with pytest.raises(openai.NotFoundError):
            client.chat.completions.create(model="gpt-nonexistent", messages=MESSAGES)

        ledger = report(server)
        totals = ledger["totals"]
        assert totals["requests"] == len(received)
        assert totals["input_tokens"] == sum(u.prompt_tokens for _, u in received)
        assert totals["output_tokens"] == sum(u.completion_tokens for _, u in received)
        assert totals["total_tokens"] == sum(u.total_tokens for _, u in received)
        reasoning = sum(u.completion_tokens_details.reasoning_tokens or 0 for _, u in received
                        if u.completion_tokens_details)  # fmt: skip
        assert totals["reasoning_tokens"] == reasoning > 0
        expected_cost = sum(
            (u.prompt_tokens * 5 + u.completion_tokens * 30) * PRICES[tier] / 1_000_000 for tier, u in received
        )
        assert totals["cost_usd"] == pytest.approx(expected_cost)
        for tier in PRICES:
            assert ledger["by_tier"][tier]["output_tokens"] == sum(u.completion_tokens for t, u in received
                                                                   if t == tier)  # fmt: skip
        assert ledger["by_key"]["sk-moc******dard"]["requests"] == 1
        assert report(server, key="sk-mock-preview", tier="flex")["totals"]["requests"] == 2
        assert {row["tier"] for row in report(server, model="gpt-5.6-sol")["rows"]} == set(PRICES)

        server.reset()
        assert report(server)["totals"]["requests"] == 0


def test_usage_is_documented_in_the_openapi_schema(server: MockServer) -> None:
    schema = httpx.get(f"{server.url}/openapi.json").json()
    operation = schema["paths"]["/_mock/usage"]["get"]
    assert {p["name"] for p in operation["parameters"]} == {"key", "model", "tier", "organization", "project"}
    assert "UsageReport" in schema["components"]["schemas"]


def test_usage_rejects_nothing_it_does_not_understand(server: MockServer) -> None:
    reply = httpx.get(f"{server.url}/_mock/usage", params={"tier": "nonsense", "extra": "1"})
    assert reply.status_code == 200 and reply.json()["totals"]["requests"] == 0


def test_ledger_counts_responses_api_usage_too() -> None:
    with MockServer(time_scale=0) as server, sdk(server) as client:
        plain = client.responses.create(model="gpt-5.6-sol", input="Hello", reasoning={"effort": "low"})
        with client.responses.stream(model="gpt-5.6-sol-ultrafast", input="Hello") as stream:
            streamed = stream.get_final_response()
        received = [u for u in (plain.usage, streamed.usage) if u is not None]
        assert len(received) == 2

        totals = report(server)["totals"]
        assert totals["requests"] == 2
        assert totals["input_tokens"] == sum(u.input_tokens for u in received)
        assert totals["output_tokens"] == sum(u.output_tokens for u in received)
        assert totals["reasoning_tokens"] == sum(u.output_tokens_details.reasoning_tokens for u in received) > 0
        assert report(server, tier="ultrafast")["totals"]["output_tokens"] == received[1].output_tokens
