"""The official SDKs, strict, get the arguments the prompt names on all three APIs, and the
answer after the tool result reports it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest

from mockserver import MockServer
from tests.conftest import PREVIEW_KEY

MODEL = "gpt-5.6-sol"
CUSTOMER: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "tier": {"type": "string", "enum": ["free", "pro"]}},
    "required": ["name", "tier"],
    "additionalProperties": False,
}
ASK = "Create a pro customer named 你好啊集团"


def test_chat_completions(client: openai.OpenAI) -> None:
    tools: list[Any] = [
        {"type": "function", "function": {"name": "ping", "description": "Checks the service"}},  # no parameters
        {"type": "function", "function": {"name": "create_customer", "parameters": CUSTOMER, "strict": True}},
    ]
    first = client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": ASK}], tools=tools)
    [call] = first.choices[0].message.tool_calls or []
    assert call.function.name == "create_customer"  # type: ignore[union-attr]
    assert json.loads(call.function.arguments) == {"name": "你好啊集团", "tier": "pro"}  # type: ignore[union-attr]
    pinged = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "hi"}], tools=tools,
        tool_choice={"type": "function", "function": {"name": "ping"}},
    )  # fmt: skip
    assert (pinged.choices[0].message.tool_calls or [])[0].function.arguments == "{}"  # type: ignore[union-attr]
    answer = client.chat.completions.create(
        model=MODEL,
        tools=tools,
        messages=[
            {"role": "user", "content": ASK},
            first.choices[0].message.model_dump(exclude_none=True),  # type: ignore[list-item]
            {"role": "tool", "tool_call_id": call.id, "content": '{"id": "cus_77", "status": "created"}'},
        ],
    )
    assert "cus_77" in (answer.choices[0].message.content or "")


def test_responses(client: openai.OpenAI) -> None:
    tool: Any = {"type": "function", "name": "create_customer", "parameters": CUSTOMER, "strict": True}
    first = client.responses.create(model=MODEL, input=ASK, tools=[tool])
    call = first.output[-1]
    assert call.type == "function_call" and json.loads(call.arguments) == {"name": "你好啊集团", "tier": "pro"}
    answer = client.responses.create(
        model=MODEL,
        tools=[tool],
        previous_response_id=first.id,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "customer cus_78 created"}],
    )
    assert "cus_78" in answer.output_text


@pytest.fixture(scope="module")
def claude_server() -> Iterator[MockServer]:
    with MockServer(time_scale=0, seed=5, presets=["claude-opus-4.8-fast"]) as running:
        yield running


def test_anthropic_messages(claude_server: MockServer) -> None:
    with anthropic.Anthropic(base_url=claude_server.url, api_key=PREVIEW_KEY, _strict_response_validation=True) as sdk:
        tool: Any = {"name": "create_customer", "input_schema": CUSTOMER}
        first = sdk.messages.create(
            model="claude-opus-4-8", max_tokens=400, tools=[tool], messages=[{"role": "user", "content": ASK}]
        )
        [use] = [b for b in first.content if b.type == "tool_use"]
        assert use.input == {"name": "你好啊集团", "tier": "pro"}
        answer = sdk.messages.create(
            model="claude-opus-4-8",
            max_tokens=400,
            tools=[tool],
            messages=[
                {"role": "user", "content": ASK},
                {"role": "assistant", "content": [b.model_dump() for b in first.content]},  # type: ignore[misc]
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "cus_79"}]},
            ],
        )
        assert "cus_79" in "".join(b.text for b in answer.content if b.type == "text")


def test_json_mode_has_the_keys_named_in_prose(client: openai.OpenAI) -> None:
    ask = "Describe a city. Reply in JSON with fields: name, population (a number), districts (a list of strings)"
    completion = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": ask}], response_format={"type": "json_object"}
    )
    answer = json.loads(completion.choices[0].message.content or "")
    assert list(answer) == ["name", "population", "districts"]
    assert isinstance(answer["name"], str) and isinstance(answer["population"], int)
    assert all(isinstance(d, str) for d in answer["districts"])
    response = client.responses.create(model=MODEL, input=ask, text={"format": {"type": "json_object"}})
    assert list(json.loads(response.output_text)) == ["name", "population", "districts"]


def test_a_json_block_asked_for_in_prose_has_the_keys_named(client: openai.OpenAI) -> None:
    ask = "Give me a joke as a ```json code block with 'setup' and 'punchline' keys."
    completion = client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": ask}])
    text = completion.choices[0].message.content or ""
    assert text.startswith("```json\n") and text.endswith("\n```")
    assert list(json.loads(text[len("```json\n") : -len("\n```")])) == ["setup", "punchline"]
