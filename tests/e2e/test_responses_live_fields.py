"""Responses and Chat replies carry what the live API sends today, and hosted tools run: driven through
the official SDK with strict validation (stream helpers included) against a real server.

- the settings in force (billing, penalties, the model's reasoning context and mode, cache retention,
  verbosity), tools echoed with the fields the API fills in, message ``phase``;
- ``obfuscation`` on streamed deltas and Chat chunks, unless ``include_obfuscation`` is false;
- a background stream starts ``queued``; ``tool_choice`` with hosted tools alone is accepted;
- web search (cited answer), image generation (a PNG), code interpreter, file search over the
  fixture's vector stores (404 for an unknown one), tool search server- and client-executed."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from mockserver import MockServer
from tests import support
from tests.conftest import PREVIEW_KEY, fixture_with

MODEL = "gpt-5.6-sol"
ASK = "What is the tallest building in Oslo?"
WEB = [{"type": "web_search"}]
PAGES = [
    {"title": "Oslo towers", "url": "https://example.com/oslo-towers"},
    {"title": "Norway's buildings", "url": "https://example.net/norway"},
]
STORE = {"id": "vs_handbook", "files": [{"file_id": "file-1", "filename": "handbook.md", "text": "Leave: 25 days."}]}


@pytest.fixture(scope="module")
def hosted_server() -> Iterator[MockServer]:
    fixture = fixture_with(hosted_tools={"web_search": {"results": PAGES}, "vector_stores": [STORE]})
    with MockServer(fixture=fixture, time_scale=0, seed=3) as running:
        yield running


@pytest.fixture
def sdk(hosted_server: MockServer) -> Iterator[openai.OpenAI]:
    with support.sdk(hosted_server, PREVIEW_KEY) as client:
        yield client


def _sse(server: MockServer, path: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The data of every event of a stream, read raw (fields the SDK's types do not list included)."""
    headers = {"Authorization": f"Bearer {PREVIEW_KEY}"}
    with httpx.Client(base_url=server.url, headers=headers, timeout=30) as http:
        reply = http.post(path, json={**body, "stream": True})
    assert reply.status_code == 200, reply.text
    lines = [line[6:] for line in reply.text.splitlines() if line.startswith("data: ") and line != "data: [DONE]"]
    return [json.loads(line) for line in lines]


# -- The settings in force --------------------------------------------------------------------------


def test_the_settings_in_force_are_reported(client: openai.OpenAI) -> None:
    response = client.responses.create(
        model=MODEL, input=ASK, text={"verbosity": "low"}, extra_body={"presence_penalty": 0.5}
    )
    body = response.model_dump(exclude_unset=True)
    assert body["billing"] == {"payer": "developer"}
    assert (body["presence_penalty"], body["frequency_penalty"]) == (0.5, 0.0)
    assert body["reasoning"] == {"context": "all_turns", "effort": "medium", "mode": "standard", "summary": None}
    assert body["prompt_cache_retention"] == "24h" and body["text"]["verbosity"] == "low"
    assert body["moderation"] is None and body["completed_at"] >= body["created_at"]
    assert body["tool_usage"]["web_search"] == {"num_requests": 0}
    assert body["usage"]["input_tokens_details"]["cache_write_tokens"] == 0
    [message] = body["output"]
    assert message["phase"] == "final_answer"
    chosen = client.responses.create(model=MODEL, input=ASK, reasoning={"effort": "low", "context": "current_turn"})
    assert chosen.model_dump()["reasoning"]["context"] == "current_turn" and chosen.reasoning.effort == "low"  # type: ignore[union-attr]


def test_tools_are_echoed_with_the_fields_the_api_fills_in(client: openai.OpenAI) -> None:
    tools: Any = [
        {"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {}}},
        {"type": "function", "name": "get_rate", "defer_loading": True, "parameters": {"type": "object"}},
        {"type": "web_search", "external_web_access": False, "user_location": {"type": "approximate", "city": "Oslo"}},
        {"type": "image_generation", "quality": "low"},
        {"type": "tool_search"},
    ]
    response = client.responses.create(model=MODEL, input=ASK, tools=tools, tool_choice="none")
    function, namespace, search, image, tool_search = response.model_dump(exclude_unset=True)["tools"]
    assert function["output_schema"] is None and function["strict"] is True and function["description"] is None
    assert namespace["type"] == "function" and namespace["defer_loading"] is True  # not loaded: no search ran
    assert "external_web_access" not in search and search["user_location"]["timezone"] is None
    assert search["user_location"]["city"] == "Oslo"
    assert image["quality"] == "low" and image["output_format"] == "png" and image["size"] == "auto"
    assert (tool_search["description"], tool_search["parameters"]) == (None, None)


def test_the_encrypted_reasoning_item_comes_when_asked_for(client: openai.OpenAI) -> None:
    response = client.responses.create(model=MODEL, input=ASK, include=["reasoning.encrypted_content"])
    reasoning, message = response.output
    assert reasoning.type == "reasoning" and reasoning.encrypted_content and message.type == "message"


# -- Streams -------------------------------------------------------------------------------------------


def test_streamed_deltas_carry_obfuscation_unless_turned_off(server: MockServer) -> None:
    events = _sse(server, "/v1/responses", {"model": MODEL, "input": ASK})
    deltas = [e for e in events if e["type"] == "response.output_text.delta"]
    assert deltas and all(isinstance(e["obfuscation"], str) for e in deltas)
    off = {"model": MODEL, "input": ASK, "stream_options": {"include_obfuscation": False}}
    assert all("obfuscation" not in e for e in _sse(server, "/v1/responses", off))
    chunks = _sse(server, "/v1/chat/completions", {"model": MODEL, "messages": [{"role": "user", "content": ASK}]})
    assert all(isinstance(chunk["obfuscation"], str) for chunk in chunks)
    with_usage = {
        "model": MODEL,
        "messages": [{"role": "user", "content": ASK}],
        "stream_options": {"include_usage": True},
    }
    assert "obfuscation" in _sse(server, "/v1/chat/completions", with_usage)[-1]  # the usage chunk too
    plain = {**with_usage, "stream_options": {"include_obfuscation": False}}
    assert all("obfuscation" not in chunk for chunk in _sse(server, "/v1/chat/completions", plain))


def test_sdk_stream_helpers_accept_the_new_fields(client: openai.OpenAI) -> None:
    with client.chat.completions.stream(
        model=MODEL, messages=[{"role": "user", "content": ASK}], stream_options={"include_usage": True}
    ) as stream:
        completion = stream.get_final_completion()
    assert completion.choices[0].message.content and completion.usage is not None
    with client.responses.stream(model=MODEL, input=ASK, include=["reasoning.encrypted_content"]) as stream:
        final = stream.get_final_response()
    assert [item.type for item in final.output] == ["reasoning", "message"]


def test_a_background_stream_starts_queued(server: MockServer) -> None:
    events = _sse(server, "/v1/responses", {"model": MODEL, "input": ASK, "background": True})
    assert [e["type"] for e in events[:3]] == ["response.created", "response.queued", "response.in_progress"]
    assert events[1]["response"]["status"] == "queued"


# -- Hosted tools -----------------------------------------------------------------------------------


def test_tool_choice_with_hosted_tools_alone_is_accepted(sdk: openai.OpenAI) -> None:
    response = sdk.responses.create(model=MODEL, input=ASK, tools=WEB, tool_choice="required")  # type: ignore[arg-type]
    assert [item.type for item in response.output] == ["web_search_call", "message"]


def test_web_search_cites_what_it_found(sdk: openai.OpenAI) -> None:
    response = sdk.responses.create(model=MODEL, input=ASK, tools=WEB)  # type: ignore[arg-type]
    call, message = response.output
    assert call.type == "web_search_call" and call.status == "completed"
    assert call.action.query == "What is the tallest building in Oslo"  # type: ignore[union-attr]
    assert message.type == "message"
    [text] = message.content
    assert text.type == "output_text"
    cited = [(a.url, a.start_index, a.end_index) for a in text.annotations]  # type: ignore[union-attr]
    assert [url for url, _, _ in cited] == [page["url"] for page in PAGES]
    assert cited[0][1] == 0 and cited[-1][2] == len(text.text)
    assert all(start < end for _, start, end in cited)
    assert response.model_dump()["tool_usage"]["web_search"] == {"num_requests": 1}
    with sdk.responses.stream(model=MODEL, input=ASK, tools=WEB) as stream:  # type: ignore[arg-type]
        kinds = [event.type for event in stream]
        streamed = stream.get_final_response()
    searching = ["response.web_search_call.in_progress", "response.web_search_call.searching"]
    assert kinds[kinds.index(searching[0]) : kinds.index(searching[0]) + 3] == [
        *searching,
        "response.web_search_call.completed",
    ]
    assert kinds.count("response.output_text.annotation.added") == len(PAGES)
    assert streamed.output[1].content[0].annotations == text.annotations  # type: ignore[union-attr]


def test_web_search_makes_up_pages_on_example_domains(client: openai.OpenAI) -> None:
    response = client.responses.create(model=MODEL, input=ASK, tools=WEB)  # type: ignore[arg-type]
    annotations = response.output[1].content[0].annotations  # type: ignore[union-attr]
    assert annotations and all(httpx.URL(a.url).host in ("example.com", "example.org") for a in annotations)  # type: ignore[union-attr]


def test_a_search_after_the_search_answers(sdk: openai.OpenAI) -> None:
    first = sdk.responses.create(model=MODEL, input=ASK, tools=WEB)  # type: ignore[arg-type]
    history: Any = [{"role": "user", "content": ASK}, *[item.model_dump(exclude_none=True) for item in first.output]]
    again = sdk.responses.create(model=MODEL, input=history, tools=WEB)  # type: ignore[arg-type]
    assert [item.type for item in again.output] == ["message"]


def test_image_generation_returns_a_png(sdk: openai.OpenAI) -> None:
    tools: Any = [{"type": "image_generation", "quality": "low"}]
    response = sdk.responses.create(model=MODEL, input="Draw an otter.", tools=tools)
    call = response.output[0]
    assert call.type == "image_generation_call" and call.result is not None
    assert base64.b64decode(call.result).startswith(b"\x89PNG\r\n\x1a\n")
    assert response.model_dump()["tool_usage"]["image_gen"]["output_tokens"] == 272
    with sdk.responses.stream(model=MODEL, input="Draw an otter.", tools=tools) as stream:
        kinds = {event.type for event in stream}
    assert {"response.image_generation_call.in_progress", "response.image_generation_call.completed"} <= kinds


def test_code_interpreter_runs_code_and_logs(sdk: openai.OpenAI) -> None:
    tools: Any = [{"type": "code_interpreter", "container": {"type": "auto"}}]
    response = sdk.responses.create(model=MODEL, input="Count the words of this.", tools=tools)
    call = response.output[0]
    assert call.type == "code_interpreter_call" and call.code
    assert call.outputs and call.outputs[0].type == "logs" and call.outputs[0].logs  # type: ignore[union-attr]
    with sdk.responses.stream(model=MODEL, input="Count the words of this.", tools=tools) as stream:
        kinds = [event.type for event in stream]
    assert "response.code_interpreter_call_code.delta" in kinds and "response.code_interpreter_call.completed" in kinds


def test_file_search_reads_the_fixtures_vector_store(sdk: openai.OpenAI) -> None:
    tools: Any = [{"type": "file_search", "vector_store_ids": ["vs_handbook"]}]
    response = sdk.responses.create(model=MODEL, input="How many days of leave?", tools=tools)
    call = response.output[0]
    assert call.type == "file_search_call" and call.results and call.results[0].filename == "handbook.md"
    unknown: Any = [{"type": "file_search", "vector_store_ids": ["vs_nowhere"]}]
    with pytest.raises(openai.NotFoundError, match="Vector store with id 'vs_nowhere' not found"):
        sdk.responses.create(model=MODEL, input="How many days of leave?", tools=unknown)


def test_tool_search_loads_deferred_functions_or_asks_the_client(sdk: openai.OpenAI) -> None:
    deferred = {
        "type": "function",
        "name": "get_rate",
        "description": "An exchange rate.",
        "defer_loading": True,
        "parameters": {"type": "object", "properties": {"pair": {"type": "string"}}, "required": ["pair"]},
    }
    tools: Any = [{"type": "tool_search"}, deferred]
    response = sdk.responses.create(model=MODEL, input="Rate of EUR to NOK?", tools=tools, tool_choice="required")
    kinds = [item.model_dump() for item in response.output]
    assert [k["type"] for k in kinds] == ["tool_search_call", "tool_search_output", "function_call"]
    assert [t["type"] for t in response.model_dump(exclude_unset=True)["tools"]] == ["function", "tool_search"]
    history: Any = [
        {"role": "user", "content": "Rate of EUR to NOK?"},
        *(item.model_dump() for item in response.output[:2]),
    ]
    later = sdk.responses.create(model=MODEL, input=history, tools=tools).model_dump(exclude_unset=True)
    assert [t["type"] for t in later["tools"]] == ["tool_search", "namespace"]  # loaded by the search before
    assert kinds[1]["tools"][0]["name"] == "get_rate" and kinds[2]["namespace"] == "get_rate"
    client_run: Any = [{"type": "tool_search", "execution": "client"}, deferred]
    asked = sdk.responses.create(model=MODEL, input="Rate of EUR to NOK?", tools=client_run)
    [call] = [item.model_dump() for item in asked.output]
    assert call["type"] == "tool_search_call" and call["execution"] == "client" and call["call_id"]


def test_a_requested_moderation_is_reported(client: openai.OpenAI) -> None:
    asked = {"moderation": {"model": "omni-moderation-latest"}}
    chat = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": ASK}], extra_body=asked
    ).model_dump(exclude_unset=True)
    for side in ("input", "output"):
        [result] = chat["moderation"][side]["results"]
        assert result["type"] == "moderation_result" and result["flagged"] is False
    response = client.responses.create(model=MODEL, input=ASK, extra_body=asked).model_dump(exclude_unset=True)
    assert response["moderation"]["output"]["model"] == "omni-moderation-latest"
    assert client.responses.create(model=MODEL, input=ASK).moderation is None  # type: ignore[attr-defined]


def test_legacy_functions_get_a_function_call(client: openai.OpenAI) -> None:
    functions: Any = [
        {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}
    ]
    messages: Any = [{"role": "user", "content": "Weather in Oslo? Use get_weather."}]
    completion = client.chat.completions.create(
        model=MODEL, messages=messages, functions=functions, function_call={"name": "get_weather"}
    )
    choice = completion.choices[0]
    assert choice.finish_reason == "function_call" and choice.message.tool_calls is None
    assert choice.message.function_call is not None and choice.message.function_call.name == "get_weather"
    assert isinstance(json.loads(choice.message.function_call.arguments), dict)
    with client.chat.completions.stream(
        model=MODEL, messages=messages, functions=functions, function_call={"name": "get_weather"}
    ) as stream:
        streamed = stream.get_final_completion()
    assert streamed.choices[0].message.function_call == choice.message.function_call


def test_chat_web_search_options_cite_the_pages_found(sdk: openai.OpenAI) -> None:
    messages: Any = [{"role": "user", "content": ASK}]
    completion = sdk.chat.completions.create(model=MODEL, messages=messages, web_search_options={})
    message = completion.choices[0].message
    cited = [
        (a.url_citation.url, a.url_citation.start_index, a.url_citation.end_index) for a in message.annotations or []
    ]
    assert [url for url, _, _ in cited] == [page["url"] for page in PAGES]
    assert cited[-1][2] == len(message.content or "")
    with sdk.chat.completions.stream(model=MODEL, messages=messages, web_search_options={}) as stream:
        streamed = stream.get_final_completion()
    assert streamed.choices[0].message.content == message.content
    assert sdk.chat.completions.create(model=MODEL, messages=messages).choices[0].message.annotations == []


def test_faults_apply_to_hosted_tool_replies(sdk: openai.OpenAI) -> None:
    with pytest.raises(openai.InternalServerError):
        sdk.responses.create(model=MODEL, input=ASK, tools=WEB, extra_headers={"x-mock-fault": "status=500"})  # type: ignore[arg-type]


def test_narrated_tool_calls_start_with_a_commentary_message(client: openai.OpenAI) -> None:
    narrate = "Briefly narrate what you are about to do before calling each tool."
    tools: Any = [{"type": "function", "name": "get_capital", "parameters": {"type": "object", "properties": {}}}]
    asked = {"model": MODEL, "input": "Capital of Norway?", "instructions": narrate, "tools": tools}
    response = client.responses.create(**asked, tool_choice="required")
    message, call = response.output
    assert message.type == "message" and message.model_dump()["phase"] == "commentary"
    assert "get_capital" in response.output_text and call.type == "function_call"
    with client.responses.stream(**asked, tool_choice="required") as stream:
        streamed = stream.get_final_response()
    assert [item.type for item in streamed.output] == ["message", "function_call"]
    plain = client.responses.create(model=MODEL, input="Capital of Norway?", tools=tools, tool_choice="required")
    assert [item.type for item in plain.output] == ["function_call"]


def test_a_function_in_a_namespace_is_called_with_its_namespace(client: openai.OpenAI) -> None:
    crm: Any = {
        "type": "namespace",
        "name": "crm",
        "description": "Customer records.",
        "tools": [{"type": "function", "name": "find_customer", "parameters": {"type": "object", "properties": {}}}],
    }
    response = client.responses.create(model=MODEL, input="Find the customer.", tools=[crm], tool_choice="required")
    [call] = [item.model_dump(exclude_unset=True) for item in response.output]
    assert (call["type"], call["name"], call["namespace"]) == ("function_call", "find_customer", "crm")


def test_a_tool_added_in_the_conversation_is_callable(client: openai.OpenAI) -> None:
    refund = {"type": "function", "name": "lookup_refund_policy", "parameters": {"type": "object", "properties": {}}}
    items: Any = [
        {"role": "user", "content": "Call the refund-policy tool for order-123."},
        {"type": "additional_tools", "role": "developer", "tools": [refund]},
    ]
    response = client.responses.create(model=MODEL, input=items)
    [call] = response.output
    assert call.type == "function_call" and call.name == "lookup_refund_policy"
