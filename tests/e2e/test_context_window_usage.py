"""The context window holds a request to the prompt its reply's usage reports: names, tool calls, content
parts and Responses items count at admission as ``prompt_tokens`` / ``input_tokens`` count them, through
the official SDKs against a real server."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest

from mockserver import MockServer
from mockserver.config.fixture import load_fixture
from mockserver.engine import tokens
from mockserver.service import context_window
from tests.e2e.test_context_window import KEY, WORD, message_of, small_window
from tests.support import fixture, sdk

MODEL = "gpt-5.6-sol"
CLAUDE = "claude-fable-5"
WINDOW = 3_000
CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
TOOLS: list[Any] = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]

CHAT: dict[str, list[Any]] = {
    "name": [{"role": "user", "content": "Hi there", "name": "ann"}],
    "tool turn": [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": "Sunny, 21 C"},
    ],
    "parts and image": [
        {"role": "system", "content": "Be brief."},
        {"role": "developer", "content": [{"type": "text", "text": "Answer in English."}]},
        {
            "role": "user",
            "name": "bob_the_builder",
            "content": [
                {"type": "text", "text": "What is in "},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
                {"type": "text", "text": "this picture?"},
            ],
        },
    ],
    "two calls with text": [
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {
            "role": "assistant",
            "content": "Looking both up.",
            "tool_calls": [CALL, {**CALL, "id": "call_2", "function": {"name": "get_weather", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "Sunny"}]},
        {"role": "tool", "tool_call_id": "call_2", "content": "Rain"},
    ],
}
RESPONSES: dict[str, dict[str, Any]] = {
    "string": {"input": "Hello there", "instructions": "Be brief."},
    "function call items": {
        "input": [
            {"role": "user", "content": "Weather in Paris?"},
            {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city": "Paris"}'},
            {"type": "function_call_output", "call_id": "call_1", "output": "Sunny, 21 C"},
        ]
    },
    "parts and roles": {
        "instructions": "Answer in English.",
        "input": [
            {"role": "developer", "content": "Be brief."},
            {"role": "system", "content": [{"type": "input_text", "text": "No markdown."}]},
            {"role": "assistant", "content": [{"type": "output_text", "text": "Earlier answer.", "annotations": []}]},
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "Describe "},
                    {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo=", "detail": "auto"},
                ],
            },
        ],
    },
}
ANTHROPIC: list[Any] = [
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"c": 1}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "Sunny"}]},
]


def admitted(body: dict[str, Any], dialect: context_window.Dialect, model: str = MODEL) -> int:
    """The count the admission holds to the window (and charges to the rate window and the prefill)."""
    spec = load_fixture(presets=[CLAUDE]).model(model)
    assert spec is not None
    return asyncio.run(context_window.measure(spec, body, dialect)).tokens


def claude(server: MockServer) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.url, api_key=KEY, max_retries=0, _strict_response_validation=True)


def text_only(messages: list[Any]) -> int:
    """The messages' text alone, as the window counted it before it counted names and tool calls."""
    return tokens.count_messages([m["content"] if isinstance(m["content"], str) else "" for m in messages])


@pytest.fixture(scope="module")
def wide() -> Iterator[MockServer]:
    with MockServer(time_scale=0, presets=["openai", CLAUDE]) as running:
        yield running


@pytest.fixture(scope="module")
def narrow() -> Iterator[MockServer]:
    with MockServer(time_scale=0, fixture=small_window(WINDOW)) as running:
        yield running


@pytest.fixture(scope="module")
def narrow_claude() -> Iterator[MockServer]:
    data = load_fixture(presets=[CLAUDE]).model_dump()
    for model in data["models"]:
        model["context_window"] = WINDOW
    with MockServer(time_scale=0, fixture=fixture(models=data["models"])) as running:
        yield running


@pytest.mark.parametrize("case", list(CHAT))
def test_chat_admission_counts_the_usage_prompt_tokens(wide: MockServer, case: str) -> None:
    body: dict[str, Any] = {"model": MODEL, "messages": CHAT[case]}
    for tools in (None, TOOLS):
        sent = {**body, "tools": tools} if tools else body
        with sdk(wide, KEY) as client:
            usage = client.chat.completions.create(**sent).usage
        assert usage is not None
        assert admitted(sent, "chat") == usage.prompt_tokens


@pytest.mark.parametrize("case", list(RESPONSES))
def test_responses_admission_counts_the_usage_input_tokens(wide: MockServer, case: str) -> None:
    body: dict[str, Any] = {"model": MODEL, **RESPONSES[case]}
    with sdk(wide, KEY) as client:
        usage = client.responses.create(**body).usage
        assert usage is not None
        assert admitted(body, "responses") == usage.input_tokens
        assert client.responses.input_tokens.count(**body).input_tokens == usage.input_tokens


def test_anthropic_admission_counts_the_usage_input_tokens(wide: MockServer) -> None:
    body: dict[str, Any] = {"model": CLAUDE, "max_tokens": 64, "system": "Be brief.", "messages": ANTHROPIC}
    with claude(wide) as c:
        usage = c.messages.create(**body).usage
    assert admitted(body, "anthropic", CLAUDE) == usage.input_tokens


def padded_to(wide: MockServer, messages: list[Any], target: int) -> list[Any]:
    """``messages`` with the first one's text lengthened so that usage reports ``target`` prompt tokens."""
    with sdk(wide, KEY) as client:
        base = client.chat.completions.create(model=MODEL, messages=messages).usage
        assert base is not None
        first = {**messages[0], "content": messages[0]["content"] + WORD * (target - base.prompt_tokens)}
        padded = [first, *messages[1:]]
        usage = client.chat.completions.create(model=MODEL, messages=padded).usage
    assert usage is not None and usage.prompt_tokens == target
    return padded


@pytest.mark.parametrize("case", ["name", "tool turn"])
def test_chat_names_and_tool_calls_push_a_prompt_past_the_window(
    wide: MockServer, narrow: MockServer, case: str
) -> None:
    over = padded_to(wide, CHAT[case], WINDOW + 1)
    assert text_only(over) <= WINDOW  # the text alone fits: the name or the tool calls pass the window
    with sdk(narrow, KEY) as client:
        with pytest.raises(openai.BadRequestError) as caught:
            client.chat.completions.create(model=MODEL, messages=over)
        assert (caught.value.status_code, caught.value.param, caught.value.code) == (
            400, "messages", "context_length_exceeded")  # fmt: skip
        assert message_of(caught.value) == (
            f"This model's maximum context length is {WINDOW} tokens. However, your messages resulted in "
            f"{WINDOW + 1} tokens. Please reduce the length of the messages."
        )
        fits = padded_to(wide, CHAT[case], WINDOW)
        usage = client.chat.completions.create(model=MODEL, messages=fits).usage
        assert usage is not None and usage.prompt_tokens == WINDOW


def test_responses_function_call_items_push_a_prompt_past_the_window(wide: MockServer, narrow: MockServer) -> None:
    items = RESPONSES["function call items"]["input"]
    with sdk(wide, KEY) as client:
        base = client.responses.create(model=MODEL, input=items).usage
        assert base is not None
        first = {**items[0], "content": items[0]["content"] + WORD * (WINDOW + 1 - base.input_tokens)}
        over = [first, *items[1:]]
        usage = client.responses.create(model=MODEL, input=over).usage
        assert usage is not None and usage.input_tokens == WINDOW + 1
    # The items' content alone fits: the function call's name and arguments pass the window.
    assert tokens.count_messages([first["content"], "", items[2]["output"]]) <= WINDOW
    with sdk(narrow, KEY) as client:
        with pytest.raises(openai.BadRequestError) as caught:
            client.responses.create(model=MODEL, input=over)
        assert (caught.value.status_code, caught.value.param, caught.value.code) == (
            400, "input", "context_length_exceeded")  # fmt: skip
        assert message_of(caught.value) == context_window.RESPONSES_MESSAGE
        fits = [{**first, "content": first["content"].removesuffix(WORD)}, *items[1:]]
        usage = client.responses.create(model=MODEL, input=fits).usage
        assert usage is not None and usage.input_tokens == WINDOW


def test_anthropic_tool_blocks_count_to_the_window(wide: MockServer, narrow_claude: MockServer) -> None:
    with claude(wide) as c:
        base = c.messages.count_tokens(model=CLAUDE, messages=ANTHROPIC).input_tokens
    over = [{**ANTHROPIC[0], "content": ANTHROPIC[0]["content"] + WORD * (WINDOW + 1 - base)}, *ANTHROPIC[1:]]
    with claude(narrow_claude) as c:
        assert c.messages.count_tokens(model=CLAUDE, messages=over).input_tokens == WINDOW + 1
        with pytest.raises(anthropic.BadRequestError) as caught:
            c.messages.create(model=CLAUDE, max_tokens=1, messages=over)
    body: Any = caught.value.body
    assert body["error"]["message"] == f"prompt is too long: {WINDOW + 1} tokens > {WINDOW} maximum"
