"""Prompt caching as the official SDKs read it, from a real server: the second of two long requests
reports cached tokens (Chat Completions and the Responses API, streamed and not, through the stream
helpers too), another organization's key does not, the cached request's prefill is shorter, and two
servers sharing one Redis agree on a hit."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import openai
import pytest

from mockserver import MockServer
from mockserver.config.fixture import load_fixture
from mockserver.config.settings import Settings
from mockserver.engine.pacing import FakeClock
from mockserver.server.app import create_app
from mockserver.service import prefill
from tests.processes import ServerProcess
from tests.redis_server import RedisServer
from tests.support import fixture, sdk

# About 1,300 prompt tokens: a long system prompt, then a question.
SYSTEM = "You are a careful assistant who answers questions about the travel policy below. " + (
    "Economy class is booked for flights under six hours; business class above that. " * 90
)
MESSAGES: list[Any] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Can I fly business?"}]
CHAT = {"model": "gpt-5.6-sol", "messages": MESSAGES}
RESPONSES = {"model": "gpt-5.6-sol", "instructions": SYSTEM, "input": "Can I fly business?"}


def write_then_read(server: MockServer) -> tuple[Any, Any]:
    """:data:`CHAT` sent twice: the usage of the first (which writes the prefix) and of the second (which
    reads it), each with its ``prompt_tokens_details``."""
    with sdk(server) as client:
        first = client.chat.completions.create(**CHAT)
        second = client.chat.completions.create(**CHAT)
    assert first.usage is not None and first.usage.prompt_tokens_details is not None
    assert second.usage is not None and second.usage.prompt_tokens_details is not None
    return first.usage, second.usage


@pytest.fixture
def server() -> Iterator[MockServer]:
    with MockServer(time_scale=0) as running:
        yield running


def test_chat_reports_cached_tokens_on_the_second_request(server: MockServer) -> None:
    first, second = write_then_read(server)
    assert first.prompt_tokens >= 1100
    assert first.prompt_tokens_details.cached_tokens == 0
    cached = second.prompt_tokens_details.cached_tokens
    assert cached is not None and cached >= 1024 and cached % 128 == 0
    assert cached <= second.prompt_tokens == first.prompt_tokens  # still counted as prompt tokens
    assert first.prompt_tokens_details.cache_write_tokens == cached  # the first one wrote what the second read


def test_chat_streams_report_cached_tokens_through_the_stream_helper(server: MockServer) -> None:
    with sdk(server) as client:
        chunks = list(client.chat.completions.create(**CHAT, stream=True, stream_options={"include_usage": True}))
        assert chunks[-1].usage is not None and chunks[-1].usage.prompt_tokens_details is not None
        assert chunks[-1].usage.prompt_tokens_details.cached_tokens == 0
        with client.chat.completions.stream(**CHAT, stream_options={"include_usage": True}) as helper:
            final = helper.get_final_completion()
    assert final.usage is not None and final.usage.prompt_tokens_details is not None
    cached = final.usage.prompt_tokens_details.cached_tokens
    assert cached is not None and cached >= 1024


def test_the_responses_api_reports_cached_tokens_created_and_streamed(server: MockServer) -> None:
    with sdk(server) as client:
        first = client.responses.create(**RESPONSES)
        second = client.responses.create(**RESPONSES)
        with client.responses.stream(**RESPONSES) as helper:
            events = list(helper)
            streamed = helper.get_final_response()
    assert first.usage is not None and second.usage is not None and streamed.usage is not None
    assert first.usage.input_tokens_details.cached_tokens == 0
    assert first.usage.input_tokens_details.cache_write_tokens >= 1024
    assert second.usage.input_tokens_details.cached_tokens >= 1024
    assert second.usage.input_tokens_details.cache_write_tokens == 0
    assert streamed.usage.input_tokens_details.cached_tokens == second.usage.input_tokens_details.cached_tokens
    completed = [e for e in events if e.type == "response.completed"]
    assert completed and completed[0].response.usage == streamed.usage


def test_a_conversation_continued_by_previous_response_id_reads_its_earlier_turn(server: MockServer) -> None:
    with sdk(server) as client:
        first = client.responses.create(**RESPONSES)
        later = client.responses.create(
            model="gpt-5.6-sol", instructions=SYSTEM, previous_response_id=first.id, input="And to Tokyo?"
        )
    assert later.usage is not None and later.usage.input_tokens_details.cached_tokens >= 1024


def test_another_organization_gets_no_hit(server: MockServer) -> None:
    with sdk(server) as preview, sdk(server, "sk-mock-standard") as other:
        preview.chat.completions.create(**CHAT)
        theirs = other.chat.completions.create(**CHAT)
        again = other.chat.completions.create(**CHAT)
    assert theirs.usage is not None and theirs.usage.prompt_tokens_details is not None
    assert theirs.usage.prompt_tokens_details.cached_tokens == 0
    assert again.usage is not None and again.usage.prompt_tokens_details is not None
    assert (again.usage.prompt_tokens_details.cached_tokens or 0) >= 1024


def test_short_prompts_report_no_cached_tokens(server: MockServer) -> None:
    short = {"model": "gpt-5.6-sol", "messages": [{"role": "user", "content": "Say hi"}]}
    with sdk(server) as client:
        client.chat.completions.create(**short)
        again = client.chat.completions.create(**short)
    assert again.usage is not None and again.usage.prompt_tokens_details is not None
    assert again.usage.prompt_tokens_details.cached_tokens == 0
    assert again.usage.prompt_tokens_details.cache_write_tokens is None


def test_the_cached_request_reads_its_prompt_faster_and_costs_less() -> None:
    clock = FakeClock()
    headers = {"authorization": "Bearer sk-mock-preview", "x-mock-output-tokens": "1"}
    world = fixture()
    with MockServer(app=create_app(Settings(), fixture=world, clock=clock)) as server:
        times, usages = [], []
        for _ in range(2):
            started = clock.now()
            reply = httpx.post(f"{server.url}/v1/chat/completions", json=CHAT, headers=headers, timeout=30)
            assert reply.status_code == 200, reply.text
            times.append(clock.now() - started)
            usages.append(reply.json()["usage"])
        journal = httpx.get(f"{server.url}/_mock/requests").json()["data"]
        prefill_ms = [entry["prefill_ms"] for entry in sorted(journal, key=lambda e: e["seq"])]
        ledger = httpx.get(f"{server.url}/_mock/usage").json()["totals"]
    prompt, cached = usages[1]["prompt_tokens"], usages[1]["prompt_tokens_details"]["cached_tokens"]
    assert cached >= 1024
    model = world.model("gpt-5.6-sol")
    assert model is not None
    profile = world.profile(model, "default")
    rate = profile.prefill_tokens_per_second
    assert rate is not None
    assert prefill_ms[0] > prefill_ms[1] > 0
    measured = prefill_ms[0] / 1000 * rate  # the prompt tokens the prefill read (the tools and framing aside)
    discount = cached / rate - cached / (rate * prefill.CACHED_SPEEDUP)
    assert prefill_ms[0] - prefill_ms[1] == pytest.approx(discount * 1000, abs=0.01)
    assert times[0] - times[1] == pytest.approx(discount, abs=0.01)  # on the fake clock: the TTFT itself
    assert measured == pytest.approx(prompt, rel=0.01)
    price = world.pricing.price("gpt-5.6-sol")
    written = usages[0]["prompt_tokens_details"]["cache_write_tokens"]
    outputs = sum(u["completion_tokens"] for u in usages)
    expected = (2 * prompt - cached - written) * price.input_per_million + outputs * price.output_per_million
    expected += cached * (price.cached_input_per_million or 0) + written * (price.cache_write_per_million or 0)
    assert ledger["cost_usd"] == pytest.approx(expected / 1_000_000)


def test_a_fixture_can_turn_caching_off() -> None:
    world = fixture(prompt_caching={"enabled": False})
    with MockServer(app=create_app(Settings(time_scale=0), fixture=world)) as server, sdk(server) as client:
        client.chat.completions.create(**CHAT)
        again = client.chat.completions.create(**CHAT)
    assert again.usage is not None and again.usage.prompt_tokens_details is not None
    assert again.usage.prompt_tokens_details.cached_tokens == 0


def test_two_servers_sharing_redis_agree_on_a_hit(redis_server: RedisServer) -> None:
    options = ("--state", redis_server.url, "--time-scale", "0")
    with ExitStack() as stack:
        one, two = (stack.enter_context(ServerProcess(*options)) for _ in range(2))
        clients = [
            stack.enter_context(openai.OpenAI(base_url=f"{s.url}/v1", api_key="sk-mock-preview", max_retries=0,
                                              _strict_response_validation=True))
            for s in (one, two)
        ]  # fmt: skip
        first = clients[0].chat.completions.create(**CHAT)
        second = clients[1].chat.completions.create(**CHAT)
    assert first.usage is not None and first.usage.prompt_tokens_details is not None
    assert first.usage.prompt_tokens_details.cached_tokens == 0
    assert second.usage is not None and second.usage.prompt_tokens_details is not None
    assert (second.usage.prompt_tokens_details.cached_tokens or 0) >= 1024


def test_the_default_fixture_prices_cached_input() -> None:
    price = load_fixture().pricing.price("gpt-5.6-sol")
    assert price.cached_input_per_million is not None and price.cached_input_per_million < price.input_per_million


def test_the_header_keeps_one_request_out_of_the_cache(server: MockServer) -> None:
    off = {"x-mock-prompt-cache": "off"}
    with sdk(server) as client:
        client.chat.completions.create(**CHAT, extra_headers=off)  # nothing written
        first = client.chat.completions.create(**CHAT)
        skipped = client.chat.completions.create(**CHAT, extra_headers=off)  # nothing read
        with pytest.raises(openai.BadRequestError) as refused:
            client.chat.completions.create(**CHAT, extra_headers={"x-mock-prompt-cache": "maybe"})
    for completion in (first, skipped):
        assert completion.usage is not None and completion.usage.prompt_tokens_details is not None
        assert completion.usage.prompt_tokens_details.cached_tokens == 0
    assert refused.value.code == "invalid_value" and refused.value.param == "x-mock-prompt-cache"


def test_prompt_cache_key_and_24h_retention_are_accepted_and_echoed(server: MockServer) -> None:
    settings: dict[str, Any] = {"prompt_cache_key": "travel-policy", "prompt_cache_retention": "24h"}
    with sdk(server) as client:
        client.chat.completions.create(**CHAT, **settings)
        chat = client.chat.completions.create(**CHAT, **settings)
        client.responses.create(**RESPONSES, **settings)
        response = client.responses.create(**RESPONSES, **settings)
    assert chat.usage is not None and chat.usage.prompt_tokens_details is not None
    assert (chat.usage.prompt_tokens_details.cached_tokens or 0) >= 1024
    assert response.usage is not None and response.usage.input_tokens_details.cached_tokens >= 1024
    assert (response.prompt_cache_key, response.prompt_cache_retention) == ("travel-policy", "24h")


def test_chat_refuses_a_retention_the_live_api_does_not_know_and_accepts_cache_options(server: MockServer) -> None:
    with sdk(server) as client:
        for retention in ("1h", "", "24H"):
            with pytest.raises(openai.BadRequestError) as refused:
                client.chat.completions.create(**CHAT, extra_body={"prompt_cache_retention": retention})
            assert refused.value.code == "invalid_value" and refused.value.param == "prompt_cache_retention"
        accepted = client.chat.completions.create(**CHAT, extra_body={"prompt_cache_options": {"ttl": "30m"}})
    assert accepted.usage is not None


def test_the_journal_shows_the_cached_and_written_prompt_tokens(server: MockServer) -> None:
    first, second = write_then_read(server)
    entries = httpx.get(f"{server.url}/_mock/requests", params={"path": "/v1/chat/completions"}).json()["data"]
    shown = [(e["usage"]["cached_tokens"], e["usage"]["cache_write_tokens"]) for e in entries]
    cached = second.prompt_tokens_details.cached_tokens
    assert cached is not None and cached >= 1024
    assert shown == [(0, first.prompt_tokens_details.cache_write_tokens), (cached, 0)]
