"""A stated length holds after a tool result, on every API, through the official SDKs.

"Answer in about 40 words" asks for about 40 × 4/3 = 53 tokens (docs/tokens.md), and the report of
what the tool returned counts within them: the answer stays within twice that, however long the tool's
result, and is still that size when the tool returned little.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest

from mockserver import MockServer
from mockserver.engine.lengths import TOKENS_PER_WORD
from tests.conftest import PREVIEW_KEY

WORDS = 40
ASKED_TOKENS = round(WORDS * TOKENS_PER_WORD)
QUESTION = f"What's the weather in Paris? Answer in about {WORDS} words."
PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
# A long result, as a search or a database tool returns: its report alone would pass the stated size.
LONG_RESULT = json.dumps(
    {"city": "Paris", "forecast": [{"day": d, "summary": "light rain clearing by the afternoon"} for d in range(12)]}
)
RESULTS = [pytest.param(LONG_RESULT, id="long-result"), pytest.param('{"temp": 21}', id="short-result")]


@pytest.fixture(scope="module")
def claude_server() -> Iterator[MockServer]:
    with MockServer(time_scale=0, seed=3, presets=["openai", "claude-opus-4.8-fast"]) as running:
        yield running


def within_stated_size(output_tokens: int) -> bool:
    return 0.5 * ASKED_TOKENS <= output_tokens <= 2 * ASKED_TOKENS


@pytest.mark.parametrize("result", RESULTS)
def test_chat_completions(client: openai.OpenAI, result: str) -> None:
    tools: list[Any] = [{"type": "function", "function": {"name": "get_weather", "parameters": PARAMS}}]
    ask: list[Any] = [{"role": "user", "content": QUESTION}]
    first = client.chat.completions.create(model="gpt-5.6-sol", messages=ask, tools=tools, tool_choice="required")
    call = (first.choices[0].message.tool_calls or [])[0]
    history = [
        *ask,
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": result},
    ]
    answer = client.chat.completions.create(model="gpt-5.6-sol", messages=history, tools=tools)
    assert answer.choices[0].finish_reason == "stop" and answer.choices[0].message.content
    assert answer.usage is not None and within_stated_size(answer.usage.completion_tokens), answer.usage


@pytest.mark.parametrize("result", RESULTS)
def test_responses(client: openai.OpenAI, result: str) -> None:
    tools: list[Any] = [{"type": "function", "name": "get_weather", "parameters": PARAMS, "strict": True}]
    first = client.responses.create(model="gpt-5.6-sol", input=QUESTION, tools=tools, tool_choice="required")
    call = next(item for item in first.output if item.type == "function_call")
    answer = client.responses.create(
        model="gpt-5.6-sol",
        previous_response_id=first.id,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": result}],
        tools=tools,
    )
    assert answer.output_text
    assert answer.usage is not None and within_stated_size(answer.usage.output_tokens), answer.usage


@pytest.mark.parametrize("result", RESULTS)
def test_anthropic_messages(claude_server: MockServer, result: str) -> None:
    tools: list[Any] = [{"name": "get_weather", "input_schema": PARAMS}]
    ask: list[Any] = [{"role": "user", "content": QUESTION}]
    with anthropic.Anthropic(
        base_url=claude_server.url, api_key=PREVIEW_KEY, max_retries=0, _strict_response_validation=True
    ) as claude:
        first = claude.messages.create(
            model="claude-opus-4-8", max_tokens=1024, messages=ask, tools=tools, tool_choice={"type": "any"}
        )
        use = next(block for block in first.content if block.type == "tool_use")
        history = [
            *ask,
            {"role": "assistant", "content": [block.model_dump(exclude_none=True) for block in first.content]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": result}]},
        ]
        answer = claude.messages.create(model="claude-opus-4-8", max_tokens=4096, messages=history, tools=tools)
    assert answer.stop_reason == "end_turn" and any(block.type == "text" for block in answer.content)
    assert within_stated_size(answer.usage.output_tokens), answer.usage
