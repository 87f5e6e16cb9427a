"""A forced ``tool_choice`` gets a tool call on every turn, tool results or not, and an agent loop that
forces tool use ends: its work tool runs, then its output tool takes the answer.

Driven against a real server through the official SDKs (strict validation) and three agent frameworks:
pydantic-ai with a structured ``output_type`` (Chat and Responses models), the OpenAI Agents SDK with
``tool_choice="required"``, and LangChain's ``create_agent`` with a ``ToolStrategy`` response format."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pydantic
import pytest

from mockserver import MockServer
from tests import support
from tests.conftest import PREVIEW_KEY

MODEL = "gpt-5.6-sol"
ASK = "What's the weather in Oslo?"
WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "The current weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
}
FINAL = {
    "type": "function",
    "name": "final_result",
    "description": "The final response which ends this conversation",
    "parameters": {
        "type": "object",
        "properties": {"summary": {"type": "string"}},
        "required": ["summary"],
        "additionalProperties": False,
    },
}


def _chat_tool(tool: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {k: v for k, v in tool.items() if k != "type"}}


class Forecast(pydantic.BaseModel):
    """A weather forecast for one city."""

    city: str
    summary: str


# -- The SDKs: a forced choice after a tool result ---------------------------------------------------


@pytest.mark.parametrize(
    "choice",
    ["required", {"type": "function", "function": {"name": "get_weather"}}],
    ids=["required", "named"],
)
def test_chat_forced_choice_calls_after_a_tool_result(client: openai.OpenAI, choice: Any) -> None:
    tools: Any = [_chat_tool(WEATHER)]
    history: list[Any] = [{"role": "user", "content": ASK}]
    first = client.chat.completions.create(model=MODEL, messages=history, tools=tools, tool_choice=choice)
    [call] = first.choices[0].message.tool_calls or []
    history += [
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": '{"temp": 4}'},
    ]
    second = client.chat.completions.create(model=MODEL, messages=history, tools=tools, tool_choice=choice)
    assert second.choices[0].finish_reason == "tool_calls"
    [again] = second.choices[0].message.tool_calls or []
    assert again.function.name == "get_weather"  # type: ignore[union-attr]
    with client.chat.completions.stream(model=MODEL, messages=history, tools=tools, tool_choice=choice) as stream:
        streamed = stream.get_final_completion()
    [same] = streamed.choices[0].message.tool_calls or []
    assert (same.function.name, same.function.arguments) == (again.function.name, again.function.arguments)  # type: ignore[union-attr]


def test_chat_required_moves_on_to_the_output_tool(client: openai.OpenAI) -> None:
    tools: Any = [_chat_tool(WEATHER), _chat_tool(FINAL)]
    history: list[Any] = [{"role": "user", "content": ASK}]
    first = client.chat.completions.create(model=MODEL, messages=history, tools=tools, tool_choice="required")
    calls = first.choices[0].message.tool_calls or []
    assert [c.function.name for c in calls] == ["get_weather"]  # type: ignore[union-attr]
    history.append(first.choices[0].message.model_dump(exclude_none=True))
    history += [{"role": "tool", "tool_call_id": c.id, "content": "4 °C"} for c in calls]
    second = client.chat.completions.create(model=MODEL, messages=history, tools=tools, tool_choice="required")
    [final] = second.choices[0].message.tool_calls or []
    assert final.function.name == "final_result"  # type: ignore[union-attr]
    assert set(json.loads(final.function.arguments)) == {"summary"}  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "choice",
    [
        "required",
        {"type": "allowed_tools", "mode": "required", "tools": [{"type": "function", "name": "final_result"}]},
    ],
    ids=["required", "allowed_tools"],
)
def test_responses_forced_choice_calls_after_a_tool_result(client: openai.OpenAI, choice: Any) -> None:
    tools: Any = [WEATHER, FINAL]
    items: list[Any] = [
        {"role": "user", "content": ASK},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city":"Oslo"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "4 °C"},
    ]
    response = client.responses.create(model=MODEL, input=items, tools=tools, tool_choice=choice)
    [call] = [item for item in response.output if item.type == "function_call"]
    assert call.name == "final_result"
    with client.responses.stream(model=MODEL, input=items, tools=tools, tool_choice=choice) as stream:
        streamed = stream.get_final_response()
    [same] = [item for item in streamed.output if item.type == "function_call"]
    assert (same.name, same.arguments) == (call.name, call.arguments)


@pytest.fixture(scope="module")
def claude_server() -> Iterator[MockServer]:
    with MockServer(time_scale=0, seed=5, presets=["openai", "claude-opus-4.8-fast"]) as running:
        yield running


@pytest.mark.parametrize("choice", [{"type": "any"}, {"type": "tool", "name": "get_weather"}])
def test_anthropic_forced_choice_calls_after_a_tool_result(claude_server: MockServer, choice: Any) -> None:
    tool = {"name": "get_weather", "description": "The weather.", "input_schema": WEATHER["parameters"]}
    messages: list[Any] = [
        {"role": "user", "content": ASK},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "4 °C"}]},
    ]
    with anthropic.Anthropic(
        base_url=claude_server.url, api_key=PREVIEW_KEY, max_retries=0, _strict_response_validation=True
    ) as client:
        message = client.messages.create(
            model="claude-opus-4-8", max_tokens=400, messages=messages, tools=[tool], tool_choice=choice
        )
    assert message.stop_reason == "tool_use"
    assert [b.name for b in message.content if b.type == "tool_use"] == ["get_weather"]


# -- Agent frameworks: loops that force tool use end -------------------------------------------------


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_pydantic_ai_structured_output_ends(server: MockServer, api: str) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    asked: list[str] = []

    async def run() -> Any:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key=PREVIEW_KEY, max_retries=0)
        try:
            provider = OpenAIProvider(openai_client=client)
            model_type = OpenAIChatModel if api == "chat" else OpenAIResponsesModel
            model = model_type(MODEL, provider=provider)
            # GPT-5.6 takes function tools on Chat Completions only with reasoning off; pydantic-ai refuses
            # the request otherwise. `thinking=False` sends `reasoning_effort: "none"`.
            settings: Any = {"thinking": False} if api == "chat" else None
            agent = Agent(
                model, output_type=Forecast, instructions="Use get_weather, then answer.", model_settings=settings
            )

            @agent.tool_plain
            def get_weather(city: str) -> str:
                """The current weather in a city."""
                asked.append(city)
                return f"4 °C and cloudy in {city}."

            return await agent.run(ASK)
        finally:
            await client.close()

    result = asyncio.run(run())
    assert asked == ["Oslo"]
    assert isinstance(result.output, Forecast)
    replies = [m for m in result.all_messages() if m.kind == "response"]
    assert len(replies) == 2  # the get_weather call, then the final_result call


def test_openai_agents_sdk_required_tool_use_ends(server: MockServer) -> None:
    from agents import ModelSettings

    asked: list[str] = []
    result = support.run_weather_agent(
        server, asked, MODEL, ASK, model_settings=ModelSettings(tool_choice="required"), output_type=Forecast
    )
    assert asked == ["Oslo"]
    assert isinstance(result.final_output, Forecast)


def test_langchain_create_agent_with_a_tool_strategy_ends(server: MockServer) -> None:
    from langchain.agents import create_agent
    from langchain.agents.structured_output import ToolStrategy
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI

    asked: list[str] = []

    @tool
    def get_weather(city: str) -> str:
        """The current weather in a city."""
        asked.append(city)
        return f"4 °C and cloudy in {city}."

    model = ChatOpenAI(model=MODEL, base_url=server.base_url, api_key=PREVIEW_KEY, max_retries=0)  # type: ignore[arg-type]
    agent = create_agent(model, tools=[get_weather], response_format=ToolStrategy(Forecast))
    result = agent.invoke({"messages": [{"role": "user", "content": ASK}]}, {"recursion_limit": 8})
    assert asked == ["Oslo"]
    assert isinstance(result["structured_response"], Forecast)
