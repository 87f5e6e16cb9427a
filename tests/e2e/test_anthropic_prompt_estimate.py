"""What the Messages API counts of a conversation before it plans, through the ``anthropic`` SDK against a
real server: earlier tool calls' ``input``, thinking and nested tool results count toward the context
window exactly as ``usage`` and ``count_tokens`` count them, and a long tool call is cached."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from mockserver import MockServer
from mockserver.config.fixture import Fixture, load_fixture_data, parse_fixture

MODEL = "claude-opus-4-8"
WINDOW = 4_000
WEATHER = {"name": "weather", "description": "The weather in a city.",
           "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}  # fmt: skip


def world(window: int = WINDOW) -> Fixture:
    data = parse_fixture(load_fixture_data(), presets=["claude-opus-4.8-fast"]).model_dump()
    data["presets"] = []  # merged already: merging again would put the preset's window back
    for model in data["models"]:
        if model["id"] == MODEL:
            model["context_window"] = window
    return parse_fixture(data)


@pytest.fixture(scope="module")
def claude() -> Iterator[anthropic.Anthropic]:
    with (
        MockServer(fixture=world(), time_scale=0) as server,
        anthropic.Anthropic(
            base_url=server.url, api_key="sk-mock-preview", max_retries=0, _strict_response_validation=True
        ) as client,
    ):
        yield client


def conversation(notes: str, *, marker: bool = False) -> list[dict[str, Any]]:
    """A turn whose tool call carries ``notes`` in its input (short text around it), answered by a nested result."""
    call = {"type": "tool_use", "id": "toolu_01", "name": "weather", "input": {"city": "Oslo", "notes": notes}}
    if marker:
        call["cache_control"] = {"type": "ephemeral"}
    return [
        {"role": "user", "content": "What is the weather in Oslo?"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "The user wants the weather; I call the tool.", "signature": "c2ln"},
            {"type": "redacted_thinking", "data": "ZW5jcnlwdGVk"},
            {"type": "text", "text": "Let me look."},
            call,
        ]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": [
            {"type": "text", "text": "Sunny, 18 degrees."}]}]},
    ]  # fmt: skip


def count(client: anthropic.Anthropic, messages: list[dict[str, Any]], tools: bool = True) -> int:
    return client.messages.count_tokens(
        model=MODEL,
        tools=[WEATHER] if tools else [],
        messages=messages,  # type: ignore[arg-type]
    ).input_tokens


def whole_usage(message: anthropic.types.Message) -> int:
    usage = message.usage
    return usage.input_tokens + (usage.cache_creation_input_tokens or 0) + (usage.cache_read_input_tokens or 0)


def test_tool_call_inputs_count_toward_the_window_as_usage_counts_them(claude: anthropic.Anthropic) -> None:
    fits = conversation("rain " * 1_000)
    counted = count(claude, fits)
    assert counted > 1_000  # the tool call's input is most of the prompt
    reply = claude.messages.create(model=MODEL, max_tokens=16, tools=[WEATHER], messages=fits)  # type: ignore[arg-type]
    assert whole_usage(reply) == counted
    # Just past the window with the tool call's input alone: the live 400, with the count usage would show.
    extra = WINDOW - counted + 1  # one token a word
    over = conversation("rain " * (1_000 + extra))
    past = count(claude, over)
    assert past > WINDOW
    with pytest.raises(anthropic.BadRequestError) as caught:
        claude.messages.create(model=MODEL, max_tokens=16, tools=[WEATHER], messages=over)  # type: ignore[arg-type]
    body: Any = caught.value.body
    assert body["error"]["type"] == "invalid_request_error"
    assert body["error"]["message"] == f"prompt is too long: {past} tokens > {WINDOW} maximum"


def test_the_window_edge_is_the_usage_to_the_token(claude: anthropic.Anthropic) -> None:
    room = WINDOW - 1  # the prompt's room beside max_tokens=1
    words = 1_000
    words += room - count(claude, conversation("rain " * words))  # one token a word: to the edge
    while count(claude, conversation("rain " * (words + 1))) <= room:
        words += 1
    at_edge, past = conversation("rain " * words), conversation("rain " * (words + 1))
    assert count(claude, at_edge) <= room < count(claude, past)
    reply = claude.messages.create(model=MODEL, max_tokens=1, tools=[WEATHER], messages=at_edge)  # type: ignore[arg-type]
    assert whole_usage(reply) == count(claude, at_edge)
    with pytest.raises(anthropic.BadRequestError) as caught:
        claude.messages.create(model=MODEL, max_tokens=1, tools=[WEATHER], messages=past)  # type: ignore[arg-type]
    body: Any = caught.value.body
    assert body["error"]["message"] == (
        f"input length and `max_tokens` exceed context limit: {count(claude, past)} + 1 > {WINDOW}, decrease input "
        "length or `max_tokens` and try again"
    )


def test_a_breakpoint_after_a_long_tool_call_caches_it(claude: anthropic.Anthropic) -> None:
    # Under the cache's 1,024-token minimum without the tool call's input; well over it with it.
    messages = conversation("snow " * 1_500, marker=True)
    first = claude.messages.create(model=MODEL, max_tokens=16, tools=[WEATHER], messages=messages)  # type: ignore[arg-type]
    second = claude.messages.create(model=MODEL, max_tokens=16, tools=[WEATHER], messages=messages)  # type: ignore[arg-type]
    written = first.usage.cache_creation_input_tokens or 0
    assert written > 1_500
    assert second.usage.cache_read_input_tokens == written
    assert whole_usage(first) == whole_usage(second) == count(claude, messages)


def test_documents_and_search_results_count_their_text(claude: anthropic.Anthropic) -> None:
    text = "The supplier delivers within ten working days. " * 20
    plain = [{"role": "user", "content": "Read it."}]
    document = [{"role": "user", "content": [
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": text}},
        {"type": "text", "text": "Read it."}]}]  # fmt: skip
    search = [{"role": "user", "content": [
        {"type": "search_result", "source": "https://example.com", "title": "Terms",
         "content": [{"type": "text", "text": text}]},
        {"type": "text", "text": "Read it."}]}]  # fmt: skip
    base = count(claude, plain, tools=False)
    for messages in (document, search):
        counted = count(claude, messages, tools=False)
        assert counted > base + 150
        reply = claude.messages.create(model=MODEL, max_tokens=16, messages=messages)  # type: ignore[arg-type]
        assert whole_usage(reply) == counted
