"""Responses details as live replies carry them, driven through the official SDK with strict validation
(stream helpers included) against a real server:

- a model whose fixture entry sets ``reasoning_item_unasked`` sends its reasoning item without ``include``;
- the tools echo: ``image_generation`` names its model and leaves out ``input_fidelity`` and
  ``partial_images``; ``web_search_preview`` has no ``filters`` or ``return_token_budget``;
- ``include: ["web_search_call.action.sources"]`` lists a search's sources on the finished call;
- a tool search's output lists a loaded namespace with ``strict`` on each of its functions; the tools echo
  lists functions, then hosted tools, then namespaces, and only the functions a search loaded move;
- under ``tool_choice: "required"`` a hosted call that does the work meets the requirement."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest
from openai.types.responses import ResponseOutputItemAddedEvent as ItemAdded
from openai.types.responses import ResponseOutputItemDoneEvent as ItemDone

from mockserver import MockServer
from mockserver.config.fixture import load_fixture
from tests import support
from tests.conftest import PREVIEW_KEY, fixture_with

MODEL = "gpt-5.6-sol"
REASONER = "o4-mini"
ASK = "What is the tallest building in Oslo?"
PAGES = [
    {"title": "Oslo towers", "url": "https://example.com/oslo-towers"},
    {"title": "Norway's buildings", "url": "https://example.net/norway"},
]
SOURCES = "web_search_call.action.sources"


@pytest.fixture(scope="module")
def details_server() -> Iterator[MockServer]:
    models = load_fixture().model_dump()["models"]
    [sol] = [m for m in models if m["id"] == MODEL]
    reasoner = {**sol, "id": REASONER, "reasoning_context": None, "reasoning_item_unasked": True}
    fixture = fixture_with(models=[*models, reasoner], hosted_tools={"web_search": {"results": PAGES}})
    with MockServer(fixture=fixture, time_scale=0, seed=5) as running:
        yield running


@pytest.fixture
def sdk(details_server: MockServer) -> Iterator[openai.OpenAI]:
    with support.sdk(details_server, PREVIEW_KEY) as client:
        yield client


def test_a_model_that_reasons_unasked_sends_its_reasoning_item_without_include(sdk: openai.OpenAI) -> None:
    response = sdk.responses.create(model=REASONER, input=ASK)
    reasoning, message = response.output
    assert reasoning.type == "reasoning" and reasoning.summary == [] and reasoning.encrypted_content is None
    assert message.type == "message" and response.reasoning is not None and response.reasoning.effort == "medium"
    with sdk.responses.stream(model=REASONER, input=ASK) as stream:
        final = stream.get_final_response()
    assert [item.type for item in final.output] == ["reasoning", "message"]
    asked = sdk.responses.create(model=REASONER, input=ASK, include=["reasoning.encrypted_content"])
    assert asked.output[0].type == "reasoning" and asked.output[0].encrypted_content
    # A model without the setting sends it only when include asks for it.
    assert [item.type for item in sdk.responses.create(model=MODEL, input=ASK).output] == ["message"]


def test_hosted_tools_are_echoed_as_live(sdk: openai.OpenAI) -> None:
    tools: Any = [
        {"type": "image_generation", "quality": "low", "input_fidelity": "high", "partial_images": 2},
        {"type": "web_search_preview"},
        {"type": "web_search"},
    ]
    response = sdk.responses.create(model=MODEL, input=ASK, tools=tools, tool_choice="none")
    image, preview, search = response.model_dump(exclude_unset=True)["tools"]
    assert image["model"] == "gpt-image-1" and image["quality"] == "low"
    assert "input_fidelity" not in image and "partial_images" not in image
    assert set(preview) == {"type", "search_context_size", "user_location"}
    assert search["filters"] is None and search["return_token_budget"] == "default"
    chosen = sdk.responses.create(
        model=MODEL, input=ASK, tools=[{"type": "image_generation", "model": "gpt-image-1-mini"}], tool_choice="none"
    )
    assert chosen.model_dump(exclude_unset=True)["tools"][0]["model"] == "gpt-image-1-mini"  # as sent


def test_a_search_lists_its_sources_when_asked(sdk: openai.OpenAI) -> None:
    web: Any = [{"type": "web_search"}]
    response = sdk.responses.create(model=MODEL, input=ASK, tools=web, include=[SOURCES])  # type: ignore[list-item]
    call = response.output[0]
    assert call.type == "web_search_call" and call.action.type == "search"
    assert [(s.type, s.url) for s in call.action.sources or ()] == [("url", page["url"]) for page in PAGES]
    with sdk.responses.stream(model=MODEL, input=ASK, tools=web, include=[SOURCES]) as stream:  # type: ignore[list-item]
        added = [e.item for e in stream if e.type == "response.output_item.added"]
        final = stream.get_final_response()
    assert added[0].model_dump()["action"].get("sources") is None  # listed once the call is done
    assert final.output[0].model_dump()["action"]["sources"] == call.model_dump()["action"]["sources"]
    unasked = sdk.responses.create(model=MODEL, input=ASK, tools=web)
    assert unasked.output[0].model_dump()["action"].get("sources") is None


def test_a_tool_search_loads_a_namespace_with_strict_functions(sdk: openai.OpenAI) -> None:
    rate = {"type": "function", "name": "get_rate", "defer_loading": True, "parameters": {"type": "object"}}
    namespace = {"type": "namespace", "name": "fx", "description": "Currency tools.", "tools": [rate]}
    tools: Any = [{"type": "tool_search"}, namespace]
    response = sdk.responses.create(model=MODEL, input="Rate of EUR to NOK?", tools=tools, tool_choice="required")
    [loaded] = [item.model_dump(exclude_unset=True) for item in response.output if item.type == "tool_search_output"]
    [listed] = loaded["tools"]
    assert listed["type"] == "namespace" and "output_schema" not in listed and "strict" not in listed
    assert [(f["name"], f["strict"]) for f in listed["tools"]] == [("get_rate", True)]
    assert response.output[-1].type == "function_call"  # a tool search only loads: required still calls


def test_a_hosted_call_meets_required(sdk: openai.OpenAI) -> None:
    tools: Any = [
        {"type": "image_generation", "quality": "low"},
        {"type": "function", "name": "final_result", "parameters": {"type": "object", "properties": {}}},
    ]
    history: Any = [
        {"role": "user", "content": "Draw an otter."},
        {"type": "function_call", "call_id": "call_1", "name": "final_result", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "ok"},
    ]
    response = sdk.responses.create(model=MODEL, input=history, tools=tools, tool_choice="required")
    assert [item.type for item in response.output] == ["image_generation_call", "message"]
    with sdk.responses.stream(model=MODEL, input=history, tools=tools, tool_choice="required") as stream:
        final = stream.get_final_response()
    assert [item.type for item in final.output] == ["image_generation_call", "message"]
    # The answer after the image follows auto: the same reply as under auto.
    fresh = sdk.responses.create(model=MODEL, input="Draw an otter.", tools=tools, tool_choice="required")
    auto = sdk.responses.create(model=MODEL, input="Draw an otter.", tools=tools, tool_choice="auto")
    assert [item.type for item in fresh.output] == [item.type for item in auto.output]
    named = sdk.responses.create(
        model=MODEL,
        input="Draw an otter.",
        tools=tools,
        tool_choice={"type": "function", "name": "final_result"},
    )
    assert [item.type for item in named.output] == ["function_call"]  # a named function: called, nothing else


def test_the_tools_echo_moves_only_the_functions_a_client_search_loaded(sdk: openai.OpenAI) -> None:
    def deferred(name: str) -> dict[str, Any]:
        return {"type": "function", "name": name, "defer_loading": True, "parameters": {"type": "object"}}

    weather = {"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {}}}
    tools: Any = [{"type": "tool_search", "execution": "client"}, weather, deferred("get_rate"), deferred("stocks")]
    first = sdk.responses.create(model=MODEL, input="Rate of EUR to NOK?", tools=tools)
    echo = [(t["type"], t.get("name")) for t in first.model_dump(exclude_unset=True)["tools"]]
    assert echo == [
        ("function", "get_weather"),
        ("function", "get_rate"),
        ("function", "stocks"),
        ("tool_search", None),
    ]
    [call] = first.output
    assert call.type == "tool_search_call"
    answered = {
        "type": "tool_search_output",
        "call_id": call.call_id,
        "execution": "client",
        "tools": [deferred("get_rate")],
    }
    history: Any = [{"role": "user", "content": "Rate of EUR to NOK?"}, call.model_dump(exclude_none=True), answered]
    later = sdk.responses.create(model=MODEL, input=history, tools=tools).model_dump(exclude_unset=True)["tools"]
    listed = [(t["type"], t.get("name"), t.get("defer_loading")) for t in later]
    assert listed == [
        ("function", "get_weather", None),
        ("function", "stocks", True),  # not loaded: still deferred
        ("tool_search", None, None),
        ("namespace", "get_rate", None),
    ]


def test_context_management_compacts_past_its_threshold(sdk: openai.OpenAI) -> None:
    def ask(limit: int) -> Any:
        management: Any = [{"type": "compaction", "compact_threshold": limit}]
        return sdk.responses.create(model=MODEL, input=ASK, extra_body={"context_management": management})

    assert [item.type for item in ask(100_000).output] == ["message"]  # below the threshold: none
    compacted = ask(1)
    message, compaction = compacted.output
    assert message.type == "message" and compaction.type == "compaction" and compaction.encrypted_content
    management = [{"type": "compaction", "compact_threshold": 1}]
    with sdk.responses.stream(model=MODEL, input=ASK, extra_body={"context_management": management}) as stream:
        items = [(e.type, e.item.type) for e in stream if isinstance(e, (ItemAdded, ItemDone))]
        final = stream.get_final_response()
    assert items[-2:] == [("response.output_item.added", "compaction"), ("response.output_item.done", "compaction")]
    assert [item.type for item in final.output] == ["message", "compaction"]
    history: Any = [{"role": "user", "content": ASK}, *(item.model_dump(exclude_none=True) for item in final.output)]
    assert sdk.responses.create(model=MODEL, input=[*history, {"role": "user", "content": "And in Bergen?"}]).output


def test_functions_an_additional_tools_item_adds_are_listed_and_called_in_their_own_namespace(
    sdk: openai.OpenAI,
) -> None:
    rate = {"type": "function", "name": "get_rate", "description": "The exchange rate.", "parameters": {}}
    weather = {"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {}}}
    history: Any = [
        {"role": "user", "content": "Rate of EUR to NOK? Use get_rate."},
        {"type": "additional_tools", "role": "developer", "tools": [rate]},
    ]
    response = sdk.responses.create(model=MODEL, input=history, tools=[weather], tool_choice="required")
    echoed = response.model_dump(exclude_unset=True)["tools"]
    assert [(t["type"], t["name"]) for t in echoed] == [("function", "get_weather"), ("namespace", "get_rate")]
    assert echoed[1]["description"] == "The exchange rate." and echoed[1]["tools"][0]["strict"] is True
    [call] = response.output
    assert call.type == "function_call" and call.name == "get_rate" and call.namespace == "get_rate"


def test_a_model_that_said_a_word_before_its_earlier_calls_does_so_again(sdk: openai.OpenAI) -> None:
    weather = {"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {}}}
    history: Any = [
        {"role": "user", "content": "Weather in Oslo? Use get_weather."},
        {"role": "assistant", "content": "Checking the weather now."},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "Sunny"},
        {"role": "user", "content": "And in Bergen? Use get_weather."},
    ]
    response = sdk.responses.create(model=MODEL, input=history, tools=[weather], tool_choice="required")
    said, call = response.output
    assert said.type == "message" and said.phase == "commentary" and call.type == "function_call"


def test_an_image_only_user_message_after_a_tool_result_is_read_as_that_result(sdk: openai.OpenAI) -> None:
    get_file = {"type": "function", "name": "get_file", "parameters": {"type": "object", "properties": {}}}
    image = {"type": "input_image", "image_url": "https://example.com/cat.png", "detail": "auto"}
    history: Any = [
        {"role": "user", "content": "Describe the file get_file returns."},
        {"type": "function_call", "call_id": "call_1", "name": "get_file", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "See the image below."},
        {"role": "user", "content": [image]},
    ]
    [message] = sdk.responses.create(model=MODEL, input=history, tools=[get_file]).output
    assert message.type == "message"


def test_logprobs_are_given_per_token_when_include_asks_for_them(sdk: openai.OpenAI) -> None:
    asked: Any = {"model": MODEL, "input": ASK, "include": ["message.output_text.logprobs"], "top_logprobs": 2}
    response = sdk.responses.create(**asked)
    [part] = next(item for item in response.output if item.type == "message").content
    assert part.type == "output_text" and part.logprobs
    assert "".join(entry.token for entry in part.logprobs) == part.text
    first = part.logprobs[0]
    assert first.bytes == list(first.token.encode()) and first.logprob <= 0 and len(first.top_logprobs) == 2
    assert first.top_logprobs[0].token == first.token
    with sdk.responses.stream(**asked) as stream:
        deltas = [e for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert [entry.token for d in deltas for entry in d.logprobs] == [entry.token for entry in part.logprobs]
    [streamed] = next(item for item in final.output if item.type == "message").content
    assert streamed.type == "output_text" and streamed.logprobs == part.logprobs
    plain = sdk.responses.create(model=MODEL, input=ASK)
    [unasked] = next(item for item in plain.output if item.type == "message").content
    assert unasked.type == "output_text" and unasked.logprobs == []
