"""Agent loops through three frameworks against a real server, unscripted: each calls its tool with
the argument the prompt names and ends with an answer that mentions what the tool returned; and
LangChain's JSON mode parses an answer whose keys the prompt named in prose.

LangChain's tool-calling agent (``create_agent``, Chat Completions), the OpenAI Agents SDK
(its default Responses model) and pydantic-ai (its OpenAI chat model pointed at the server, reasoning
off as pydantic-ai requires for tools on Chat Completions)."""

from __future__ import annotations

import asyncio
from typing import Any

import openai
import pydantic
import pytest

from mockserver import MockServer
from tests import support
from tests.conftest import PREVIEW_KEY

MODEL = "gpt-5.6-sol"


def test_langchain_tool_calling_agent(server: MockServer) -> None:
    from langchain.agents import create_agent
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI

    calls: list[int] = []

    @tool
    def magic_function(input: int) -> int:
        """Applies a magic function to an input."""
        calls.append(input)
        return input + 2

    model = ChatOpenAI(model=MODEL, base_url=server.base_url, api_key=PREVIEW_KEY, max_retries=0)  # type: ignore[arg-type]
    agent = create_agent(model, tools=[magic_function])
    result = agent.invoke({"messages": [{"role": "user", "content": "what is the value of magic_function(3)?"}]})
    assert calls == [3]
    final = result["messages"][-1]
    assert final.type == "ai" and not final.tool_calls
    assert "5" in final.text


def test_openai_agents_sdk(server: MockServer) -> None:
    asked: list[str] = []
    result = support.run_weather_agent(server, asked, MODEL, "What's the weather in Oslo?")
    assert asked == ["Oslo"]
    assert "4 °C" in result.final_output and "Oslo" in result.final_output


def test_pydantic_ai_agent(server: MockServer) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    created: list[str] = []

    async def run() -> Any:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key=PREVIEW_KEY, max_retries=0)
        try:
            model = OpenAIChatModel(MODEL, provider=OpenAIProvider(openai_client=client))
            # GPT-5.6 takes function tools on Chat Completions only with reasoning off; pydantic-ai
            # refuses the request otherwise. `thinking=False` sends `reasoning_effort: "none"`.
            agent = Agent(model, instructions="You manage customers.", model_settings={"thinking": False})

            @agent.tool_plain
            def create_customer(name: str) -> dict[str, Any]:
                """Creates a customer and returns its record."""
                created.append(name)
                return {"id": "cus_0042", "name": name}

            return await agent.run("创建一个名为你好啊集团的客户")
        finally:
            await client.close()

    result = asyncio.run(run())
    assert created == ["你好啊集团"]
    assert "cus_0042" in result.output and "你好啊集团" in result.output


class Joke(pydantic.BaseModel):
    setup: str
    punchline: str


class Person(pydantic.BaseModel):
    name: str
    age: int
    hobbies: list[str]


@pytest.mark.parametrize(
    ("prompt", "schema"),
    [
        ("Tell me a joke about cats, respond in JSON with `setup` and `punchline` keys", Joke),
        (
            "Describe a fictional person. Return JSON with fields: name, age (a number), hobbies (a list of strings)",
            Person,
        ),
        ("讲一个关于猫的笑话，用 JSON 回答，包含 setup 和 punchline 字段", Joke),
    ],
)
def test_langchain_json_mode_parses_the_keys_named_in_prose(
    server: MockServer, prompt: str, schema: type[pydantic.BaseModel]
) -> None:
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(model=MODEL, base_url=server.base_url, api_key=PREVIEW_KEY, max_retries=0)  # type: ignore[arg-type]
    parsed = model.with_structured_output(schema, method="json_mode").invoke(prompt)
    assert isinstance(parsed, schema)
