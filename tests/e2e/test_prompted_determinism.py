"""The same request gives the same tool arguments, streamed and not, on Chat Completions and the
Responses API, when the arguments come from the prompt; and the answer after a tool result
reports what the tool returned, streamed and not."""

from __future__ import annotations

import json
from typing import Any

import httpx
import jsonschema
import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockserver import MockServer
from tests.conftest import PREVIEW_KEY
from tests.engine.prompted_corpus import CASES

MODEL = "gpt-5.6-sol"
cases = st.sampled_from(CASES)
seeds = st.one_of(st.none(), st.integers(min_value=0, max_value=2**31))
noise = st.text(alphabet=st.sampled_from("abc xyz,.:'\"123名为在"), max_size=20)


def _sse(response: httpx.Response) -> list[dict[str, Any]]:
    return [orjson.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: {")]


def _client(server: MockServer) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers={"authorization": f"Bearer {PREVIEW_KEY}"})


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=cases, seed=seeds, extra=noise)
def test_chat_arguments_are_the_same_streamed_and_not(
    server: MockServer, case: Any, seed: int | None, extra: str
) -> None:
    messages = [{"role": "system", "content": case.system}] if case.system else []
    messages.append({"role": "user", "content": case.prompt + extra})
    tool = {"type": "function", "function": {"name": case.tool, "parameters": case.parameters}}
    body: dict[str, Any] = {"model": MODEL, "messages": messages, "tools": [tool], "tool_choice": "required"}
    if seed is not None:
        body["seed"] = seed
    with _client(server) as http:
        whole = http.post("/v1/chat/completions", json=body).json()
        chunks = _sse(http.post("/v1/chat/completions", json={**body, "stream": True}))
    [call] = whole["choices"][0]["message"]["tool_calls"]
    streamed = "".join(
        d["function"].get("arguments", "")
        for c in chunks
        if c["choices"]
        for d in c["choices"][0]["delta"].get("tool_calls") or []
    )
    assert streamed == call["function"]["arguments"]
    jsonschema.validate(json.loads(streamed), case.parameters)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=cases, seed=seeds)
def test_responses_arguments_are_the_same_streamed_and_not(server: MockServer, case: Any, seed: int | None) -> None:
    tool = {"type": "function", "name": case.tool, "parameters": case.parameters}
    body: dict[str, Any] = {"model": MODEL, "input": case.prompt, "tools": [tool], "tool_choice": "required"}
    if case.system:
        body["instructions"] = case.system
    if seed is not None:
        body["seed"] = seed
    with _client(server) as http:
        whole = http.post("/v1/responses", json=body).json()
        events = _sse(http.post("/v1/responses", json={**body, "stream": True}))
    [done] = [e for e in events if e["type"] == "response.function_call_arguments.done"]
    assert done["arguments"] == whole["output"][-1]["arguments"]


def test_the_answer_after_a_tool_result_reports_it_streamed_and_not(server: MockServer) -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "What's the weather in Oslo?"},
        {"role": "assistant", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'}}
        ]},
        {"role": "tool", "tool_call_id": "call_1", "content": '{"city": "Oslo", "temperature": 4, "unit": "°C"}'},
    ]  # fmt: skip
    tool = {"type": "function", "function": {"name": "get_weather", "parameters": CASES[2].parameters}}
    body = {"model": MODEL, "messages": messages, "tools": [tool], "seed": 3}
    with _client(server) as http:
        whole = http.post("/v1/chat/completions", json=body).json()["choices"][0]["message"]["content"]
        chunks = _sse(http.post("/v1/chat/completions", json={**body, "stream": True}))
    streamed = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert whole == streamed
    assert whole.startswith("The tool returned city: Oslo, temperature: 4, unit: °C.")
