"""The usage ledger (``GET /_mock/usage``) counts the prompt tokens read from and written to the prompt
cache, as the official SDKs read them in the replies: a cache write then a read, on Chat Completions,
the Responses API and the Messages API, on one server in memory and on two servers sharing one real
``redis-server``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import anthropic
import httpx
import openai
import pytest

from mockserver import MockServer
from mockserver.config.fixture import load_fixture_data, parse_fixture
from tests.e2e.test_prompt_caching import CHAT, RESPONSES, write_then_read
from tests.e2e.test_prompt_caching_anthropic import QUESTION, system
from tests.processes import ServerProcess
from tests.redis_server import RedisServer
from tests.support import sdk

OPUS = {"model": "claude-opus-4-8", "max_tokens": 16, "system": system(), "messages": [QUESTION]}
PRESET = "claude-opus-4.8-fast"  # the Claude model and its cache, as the Anthropic caching tests serve it


@pytest.fixture
def server() -> Iterator[MockServer]:
    with MockServer(fixture=parse_fixture(load_fixture_data(), presets=[PRESET]), time_scale=0) as running:
        yield running


def ledger(url: str, **filters: str) -> dict[str, Any]:
    reply = httpx.get(f"{url}/_mock/usage", params=filters, timeout=30)
    assert reply.status_code == 200, reply.text
    return dict(reply.json())


def openai_client(url: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=f"{url}/v1", api_key="sk-mock-preview", max_retries=0, _strict_response_validation=True
    )


def claude(url: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=url, api_key="sk-mock-preview", max_retries=0)


def test_a_chat_write_then_read_is_counted_in_the_row_and_the_totals(server: MockServer) -> None:
    first, second = write_then_read(server)
    written = first.prompt_tokens_details.cache_write_tokens
    read = second.prompt_tokens_details.cached_tokens
    assert written is not None and read is not None and written >= 1024 and read == written
    report = ledger(server.url, model="gpt-5.6-sol")
    (row,) = report["rows"]
    assert (row["requests"], row["cached_tokens"], row["cache_write_tokens"]) == (2, read, written)
    assert row["input_tokens"] == first.prompt_tokens + second.prompt_tokens  # cached ones included
    assert row["total_tokens"] == row["input_tokens"] + row["output_tokens"]  # the existing fields as they were
    for totals in (report["totals"], report["by_model"]["gpt-5.6-sol"], report["by_tier"]["default"]):
        assert (totals["cached_tokens"], totals["cache_write_tokens"]) == (read, written)


def test_the_responses_api_write_then_read_adds_up_with_what_the_client_was_told(server: MockServer) -> None:
    with sdk(server) as client:
        replies = [client.responses.create(**RESPONSES) for _ in range(2)]
    read = [r.usage.input_tokens_details.cached_tokens for r in replies if r.usage is not None]
    written = [getattr(r.usage.input_tokens_details, "cache_write_tokens", 0) or 0 for r in replies if r.usage]
    assert read[0] == 0 and read[1] >= 1024 and written[0] >= 1024
    totals = ledger(server.url)["totals"]
    assert (totals["cached_tokens"], totals["cache_write_tokens"]) == (sum(read), sum(written))


def test_a_messages_write_then_read_is_counted_as_anthropic_reports_it(server: MockServer) -> None:
    with claude(server.url) as client:
        first = client.messages.create(**OPUS)
        second = client.messages.create(**OPUS)
    written, read = first.usage.cache_creation_input_tokens, second.usage.cache_read_input_tokens
    assert written is not None and written >= 1024 and read == written
    (row,) = ledger(server.url, model="claude-opus-4-8")["rows"]
    assert (row["requests"], row["cached_tokens"], row["cache_write_tokens"]) == (2, read, written)
    # The ledger's input_tokens is the whole prompt: Anthropic's three input counts added up.
    prompt = first.usage.input_tokens + written + second.usage.input_tokens + read
    assert row["input_tokens"] == prompt


def test_a_request_without_caching_counts_zero(server: MockServer) -> None:
    with sdk(server) as client:
        client.chat.completions.create(model="gpt-5.6-sol", messages=[{"role": "user", "content": "Hi"}])
    (row,) = ledger(server.url)["rows"]
    assert (row["requests"], row["cached_tokens"], row["cache_write_tokens"]) == (1, 0, 0)


def test_two_servers_sharing_redis_count_the_write_on_one_and_the_read_on_the_other(redis_server: RedisServer) -> None:
    options = ("--state", redis_server.url, "--time-scale", "0", "--preset", PRESET)
    with ExitStack() as stack:
        one, two = (stack.enter_context(ServerProcess(*options)) for _ in range(2))
        gpt = [stack.enter_context(openai_client(s.url)) for s in (one, two)]
        opus = [stack.enter_context(claude(s.url)) for s in (one, two)]
        chat = [gpt[0].chat.completions.create(**CHAT), gpt[1].chat.completions.create(**CHAT)]
        messages = [opus[0].messages.create(**OPUS), opus[1].messages.create(**OPUS)]
        reports = [ledger(s.url) for s in (one, two)]
    assert reports[0]["rows"] == reports[1]["rows"]  # one ledger, whichever server is asked
    rows = {row["model"]: row for row in reports[0]["rows"]}
    details = [c.usage.prompt_tokens_details for c in chat if c.usage is not None]
    assert details[0] is not None and details[1] is not None
    assert (rows["gpt-5.6-sol"]["cached_tokens"], rows["gpt-5.6-sol"]["cache_write_tokens"]) == (
        details[1].cached_tokens,
        details[0].cache_write_tokens,
    )
    assert (details[1].cached_tokens or 0) >= 1024
    written, read = messages[0].usage.cache_creation_input_tokens, messages[1].usage.cache_read_input_tokens
    assert written is not None and written >= 1024 and read == written
    assert (rows["claude-opus-4-8"]["cached_tokens"], rows["claude-opus-4-8"]["cache_write_tokens"]) == (read, written)
    totals = reports[1]["totals"]
    assert totals["cached_tokens"] == (details[1].cached_tokens or 0) + read
