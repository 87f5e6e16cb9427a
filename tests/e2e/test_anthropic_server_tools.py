"""The Messages API as the live API answers today's requests, checked with the official ``anthropic`` SDK
in strict mode against a running server: server tools with their blocks, citations and usage, the pause
of a long server-tool turn, the usage fields and blocks of current replies, and the requests the live API
accepts (server-tool-only ``tool_choice``, mid-conversation ``system`` messages, merged turns, the older
``output_format``). Every streamed reply is rebuilt by the SDK's stream helper and equals the plain one.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from typing import Any

import anthropic
import pydantic
import pytest

from mockserver import MockServer
from tests.conftest import PREVIEW_KEY

OPUS = "claude-opus-4-8"
WEB_SEARCH = {"type": "web_search_20250305", "name": "web_search"}
WEB_FETCH = {"type": "web_fetch_20250910", "name": "web_fetch"}
CODE = {"type": "code_execution_20250825", "name": "code_execution"}
BM25 = {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
REGEX = {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"}
ADVISOR = {"type": "advisor_20260301", "name": "advisor", "model": OPUS, "max_tokens": 1024}
WEATHER = {
    "name": "get_weather",
    "description": "The current weather in a city.",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
RATES = {
    "name": "get_exchange_rate",
    "description": "The exchange rate between two currencies.",
    "defer_loading": True,
    "input_schema": {
        "type": "object",
        "properties": {"base": {"type": "string"}, "quote": {"type": "string"}},
        "required": ["base", "quote"],
    },
}
STOCKS = {
    "name": "stock_lookup",
    "description": "The latest price of a listed company's stock.",
    "defer_loading": True,
    "input_schema": {"type": "object", "properties": {"ticker": {"type": "string"}}, "required": ["ticker"]},
}
EXAMPLE = re.compile(r"^https://example\.(com|org|net)/")

_CLIENTS: list[anthropic.Anthropic] = []


@pytest.fixture(scope="module")
def claude_server() -> Iterator[MockServer]:
    with MockServer(time_scale=0, seed=11, presets=["claude-opus-4.8-fast"]) as running:
        yield running
    while _CLIENTS:
        _CLIENTS.pop().close()


@pytest.fixture
def client(claude_server: MockServer) -> anthropic.Anthropic:
    made = anthropic.Anthropic(
        base_url=claude_server.url, api_key=PREVIEW_KEY, _strict_response_validation=True, max_retries=0
    )
    _CLIENTS.append(made)
    return made


def both(client: anthropic.Anthropic, beta: bool = False, **request: Any) -> Any:
    """The plain reply, after checking that the stream helper rebuilds the same message."""
    messages: Any = client.beta.messages if beta else client.messages
    plain = messages.create(model=OPUS, **request)
    with messages.stream(model=OPUS, **request) as stream:
        streamed = stream.get_final_message()
    assert _comparable(streamed) == _comparable(plain)
    return plain


def _comparable(message: Any) -> Any:
    """A message without what differs between two requests (ids, times) and without null fields (the
    stream helper sets a compaction delta's null ``encrypted_content`` on its block)."""
    data = message.to_dict(exclude_none=True)
    data.pop("id")
    text = re.sub(r"(srvtoolu|toolu|container)_01[1C]?[A-Za-z0-9]+", r"\1_", repr(data))
    return re.sub(r"datetime\.datetime\([^)]*\)\)|'\d{4}-\d\d-\d\dT[^']+'", "time", text)  # the clock moved on


def kinds(message: Any) -> list[str]:
    return [block.type for block in message.content]


# -- Server tools ---------------------------------------------------------------------------------


def test_web_search_runs_once_per_quoted_query_and_the_answer_cites_its_results(client: anthropic.Anthropic) -> None:
    ask = 'Search for "tide times in Brest" and "ferry to Ushant", then sum up.'
    reply = both(client, max_tokens=600, messages=[{"role": "user", "content": ask}], tools=[WEB_SEARCH])
    assert kinds(reply)[:5] == [
        "text",
        "server_tool_use",
        "web_search_tool_result",
        "server_tool_use",
        "web_search_tool_result",
    ]
    calls = [b for b in reply.content if b.type == "server_tool_use"]
    assert [c.input for c in calls] == [{"query": "tide times in Brest"}, {"query": "ferry to Ushant"}]
    results = [b for b in reply.content if b.type == "web_search_tool_result"]
    assert [r.tool_use_id for r in results] == [c.id for c in calls]
    urls = [hit.url for r in results for hit in r.content]  # type: ignore[union-attr]
    assert len(urls) == 6 and all(EXAMPLE.match(u) for u in urls)
    cited = [b for b in reply.content if b.type == "text" and b.citations]
    assert len(cited) == 1 and cited[0].citations[0].url in urls  # type: ignore[index, union-attr]
    assert reply.stop_reason == "end_turn"
    assert reply.usage.server_tool_use is not None and reply.usage.server_tool_use.web_search_requests == 2


def test_a_long_server_tool_turn_pauses_and_continues_when_sent_back(client: anthropic.Anthropic) -> None:
    queries = " ".join(f'{n}) "topic number {n}"' for n in range(1, 13))
    ask = [{"role": "user", "content": f"Run these searches one at a time: {queries}"}]
    paused = both(client, max_tokens=800, messages=ask, tools=[WEB_SEARCH])
    assert paused.stop_reason == "pause_turn"
    assert kinds(paused).count("web_search_tool_result") == 10 and kinds(paused)[-1] == "server_tool_use"
    assert paused.usage.server_tool_use is not None and paused.usage.server_tool_use.web_search_requests == 10
    sent_back = [*ask, {"role": "assistant", "content": [b.to_dict() for b in paused.content]}]
    resumed = both(client, max_tokens=800, messages=sent_back, tools=[WEB_SEARCH])
    results = [b for b in resumed.content if b.type == "web_search_tool_result"]
    assert results[0].tool_use_id == paused.content[-1].id  # type: ignore[union-attr]
    assert len(results) == 2 and resumed.stop_reason == "end_turn"
    assert resumed.usage.server_tool_use is not None and resumed.usage.server_tool_use.web_search_requests == 2


def test_web_fetch_fetches_the_url_the_prompt_gives(client: anthropic.Anthropic) -> None:
    ask = [{"role": "user", "content": "What does https://example.org/guide say?"}]
    reply = both(client, max_tokens=400, messages=ask, tools=[WEB_FETCH])
    use, result = (b for b in reply.content if b.type in ("server_tool_use", "web_fetch_tool_result"))
    assert use.input == {"url": "https://example.org/guide"}  # type: ignore[union-attr]
    fetched = result.content  # type: ignore[union-attr]
    assert fetched.type == "web_fetch_result" and fetched.url == "https://example.org/guide"  # type: ignore[union-attr]
    assert fetched.content.source.data  # type: ignore[union-attr]
    assert reply.usage.server_tool_use is not None and reply.usage.server_tool_use.web_fetch_requests == 1


def test_code_execution_works_out_the_prompts_arithmetic_in_a_container(client: anthropic.Anthropic) -> None:
    ask = [{"role": "user", "content": "Calculate 3 * 12390 with code."}]
    reply = both(client, max_tokens=400, messages=ask, tools=[CODE])
    use = next(b for b in reply.content if b.type == "server_tool_use")
    assert use.name == "bash_code_execution" and use.input == {"command": "echo $((3 * 12390))"}
    result = next(b for b in reply.content if b.type == "bash_code_execution_tool_result")
    assert result.content.stdout == "37170\n" and result.content.return_code == 0  # type: ignore[union-attr]
    assert reply.container is not None and reply.container.id.startswith("container_")
    again = client.messages.create(model=OPUS, max_tokens=400, messages=ask, tools=[CODE], container="container_x")
    assert again.container is not None and again.container.id == "container_x"


def test_code_execution_writes_a_file_with_the_text_editor_then_runs_it(client: anthropic.Anthropic) -> None:
    ask = [{"role": "user", "content": "Write a file that prints hello, then run it."}]
    reply = both(client, max_tokens=400, messages=ask, tools=[CODE])
    names = [b.name for b in reply.content if b.type == "server_tool_use"]
    assert names == ["text_editor_code_execution", "bash_code_execution"]
    edit = next(b for b in reply.content if b.type == "text_editor_code_execution_tool_result")
    assert edit.content.type == "text_editor_code_execution_create_result"  # type: ignore[union-attr]


@pytest.mark.parametrize("search", [BM25, REGEX], ids=["bm25", "regex"])
def test_tool_search_finds_the_deferred_tool_and_the_model_calls_it(
    client: anthropic.Anthropic, search: dict[str, Any]
) -> None:
    ask = [{"role": "user", "content": "What is the exchange rate from USD to EUR today?"}]
    tools = [search, RATES, STOCKS]
    reply = both(client, max_tokens=400, messages=ask, tools=tools)
    found = next(b for b in reply.content if b.type == "tool_search_tool_result")
    names = [r.tool_name for r in found.content.tool_references]  # type: ignore[union-attr]
    assert names[0] == "get_exchange_rate"
    call = next(b for b in reply.content if b.type == "tool_use")
    assert call.name == "get_exchange_rate" and reply.stop_reason == "tool_use"
    assert call.caller is not None and call.caller.type == "direct"
    # The round trip: the search result sent back keeps the found tool loaded, the deferred one is not.
    history = [*ask, {"role": "assistant", "content": [b.to_dict() for b in reply.content]}]
    history.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "0.92"}]})
    forced = client.messages.create(
        model=OPUS, max_tokens=400, messages=history, tools=tools, tool_choice={"type": "any"}
    )
    assert next(b.name for b in forced.content if b.type == "tool_use") in names


def test_the_advisor_is_consulted_and_counted_in_usage_iterations(client: anthropic.Anthropic) -> None:
    ask = [{"role": "user", "content": "What's 2+2? Consult your advisor first."}]
    reply = both(client, beta=True, max_tokens=400, messages=ask, tools=[ADVISOR])
    advice = next(b for b in reply.content if b.type == "advisor_tool_result")
    assert advice.content.type == "advisor_result" and advice.content.text  # type: ignore[union-attr]
    iterations = reply.usage.iterations
    assert [i.type for i in iterations] == ["message", "advisor_message", "message"]
    assert iterations[1].model == OPUS
    redacted = {**ADVISOR, "model": "claude-fable-5"}
    hidden = client.beta.messages.create(model=OPUS, max_tokens=400, messages=ask, tools=[redacted])  # type: ignore[list-item]
    content = next(b for b in hidden.content if b.type == "advisor_tool_result").content  # type: ignore[union-attr]
    assert content.type == "advisor_redacted_result" and content.encrypted_content  # type: ignore[union-attr]


def test_server_tools_are_not_run_once_a_tool_result_answers_the_turn(client: anthropic.Anthropic) -> None:
    first = client.messages.create(
        model=OPUS, max_tokens=300, messages=[{"role": "user", "content": "Weather in Oslo?"}], tools=[WEATHER]
    )
    call = next(b for b in first.content if b.type == "tool_use")
    history = [
        {"role": "user", "content": "Weather in Oslo?"},
        {"role": "assistant", "content": [b.to_dict() for b in first.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "Sunny"}]},
    ]
    reply = client.messages.create(model=OPUS, max_tokens=300, messages=history, tools=[WEATHER, WEB_SEARCH])  # type: ignore[list-item]
    assert kinds(reply) == ["text"] and reply.usage.server_tool_use is not None
    assert reply.usage.server_tool_use.web_search_requests == 0


def test_a_script_gives_server_tool_runs_verbatim(claude_server: MockServer, client: anthropic.Anthropic) -> None:
    hit = {
        "type": "web_search_result",
        "title": "Tides",
        "url": "https://example.net/t",
        "encrypted_content": "x",
        "page_age": None,
    }
    step = {
        "text": "High tide is at noon.",
        "server_tools": [{"name": "web_search", "input": {"query": "tide"}, "result": [hit]}],
    }
    claude_server.configure(scripts={"(?i)tide": step})
    try:
        reply = both(
            client, max_tokens=300, messages=[{"role": "user", "content": "When is tide?"}], tools=[WEB_SEARCH]
        )
    finally:
        claude_server.reset()
    assert kinds(reply)[:2] == ["server_tool_use", "web_search_tool_result"]
    assert reply.content[0].input == {"query": "tide"}  # type: ignore[union-attr]
    assert reply.content[1].content[0].url == "https://example.net/t"  # type: ignore[union-attr, index]
    assert "".join(b.text for b in reply.content if b.type == "text") == "High tide is at noon."


# -- Forced tool_choice with server tools ---------------------------------------------------------


def test_tool_choice_with_server_tools_only_is_accepted_and_any_runs_one(client: anthropic.Anthropic) -> None:
    ask = [{"role": "user", "content": "News about the harbour?"}]
    auto = client.messages.create(
        model=OPUS, max_tokens=300, messages=ask, tools=[WEB_SEARCH], tool_choice={"type": "auto"}
    )  # type: ignore[list-item]
    assert "web_search_tool_result" in kinds(auto)
    forced = both(client, max_tokens=300, messages=ask, tools=[WEB_SEARCH, WEB_FETCH], tool_choice={"type": "any"})
    assert [b.name for b in forced.content if b.type == "server_tool_use"] == ["web_search"]
    named = client.messages.create(
        model=OPUS,
        max_tokens=300,
        messages=ask,
        tools=[WEB_SEARCH, WEB_FETCH, WEATHER],  # type: ignore[list-item]
        tool_choice={"type": "tool", "name": "web_fetch"},
    )
    assert [b.name for b in named.content if b.type == "server_tool_use"] == ["web_fetch"]
    assert "tool_use" not in kinds(named)


def test_a_forced_custom_tool_is_called_after_the_server_runs_without_a_preamble(client: anthropic.Anthropic) -> None:
    ask = [{"role": "user", "content": "Weather in Oslo?"}]
    named = {"type": "tool", "name": "get_weather"}
    reply = both(client, max_tokens=300, messages=ask, tools=[WEB_SEARCH, WEATHER], tool_choice=named)
    assert kinds(reply) == ["tool_use"] and reply.stop_reason == "tool_use"
    anyone = both(client, max_tokens=300, messages=ask, tools=[WEB_SEARCH, WEATHER], tool_choice={"type": "any"})
    assert kinds(anyone) == ["server_tool_use", "web_search_tool_result", "tool_use"]


def test_adaptive_thinking_with_a_forced_tool_calls_it_without_thinking(client: anthropic.Anthropic) -> None:
    ask = [{"role": "user", "content": "Weather in Oslo?"}]
    reply = both(
        client,
        max_tokens=2000,
        messages=ask,
        tools=[WEATHER],
        tool_choice={"type": "any"},
        thinking={"type": "adaptive"},
    )
    assert kinds(reply) == ["tool_use"]
    with pytest.raises(anthropic.BadRequestError, match="Thinking may not be enabled when tool_choice forces tool use"):
        client.messages.create(
            model=OPUS,
            max_tokens=2000,
            messages=ask,  # type: ignore[arg-type]
            tools=[WEATHER],  # type: ignore[list-item]
            tool_choice={"type": "any"},
            thinking={"type": "enabled", "budget_tokens": 1024},
        )


# -- Requests the live API accepts ----------------------------------------------------------------


def test_a_mid_conversation_system_message_adds_a_deferred_tool(client: anthropic.Anthropic) -> None:
    refund = {**RATES, "name": "lookup_refund_policy", "description": "The refund policy of an order."}
    first = [{"role": "user", "content": "Then call lookup_refund_policy for order A-1."}]
    messages = [
        *first,
        {"role": "assistant", "content": [{"type": "text", "text": "I can check that."}]},
        {"role": "user", "content": "Please go ahead and call lookup_refund_policy."},
        {
            "role": "system",
            "content": [{"type": "tool_addition", "tool": {"type": "tool_reference", "name": "lookup_refund_policy"}}],
        },
    ]
    reply = client.messages.create(model=OPUS, max_tokens=300, messages=messages, tools=[refund, BM25])  # type: ignore[arg-type, list-item]
    assert [b.name for b in reply.content if b.type == "tool_use"] == ["lookup_refund_policy"]


def test_consecutive_messages_of_one_role_are_one_turn(client: anthropic.Anthropic) -> None:
    call = {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Oslo"}}
    merged = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": [{"type": "text", "text": "Checking."}]},
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": "Here it is:"},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01A", "content": "Sunny"}]},
    ]
    reply = client.messages.create(model=OPUS, max_tokens=200, messages=merged, tools=[WEATHER])  # type: ignore[arg-type, list-item]
    assert reply.stop_reason in ("end_turn", "tool_use")
    unanswered = [*merged[:3], {"role": "user", "content": "Never mind."}]
    with pytest.raises(anthropic.BadRequestError, match=r"messages\.2: `tool_use` ids were found without"):
        client.messages.create(model=OPUS, max_tokens=200, messages=unanswered, tools=[WEATHER])  # type: ignore[arg-type, list-item]


def test_the_older_output_format_parameter_shapes_the_answer(client: anthropic.Anthropic) -> None:
    schema = {
        "type": "object",
        "properties": {"answer": {"type": "integer"}},
        "required": ["answer"],
        "additionalProperties": False,
    }
    reply = client.messages.create(
        model=OPUS,
        max_tokens=300,
        messages=[{"role": "user", "content": "2+2?"}],
        extra_body={"output_format": {"type": "json_schema", "schema": schema}},
    )
    text = reply.content[0].text  # type: ignore[union-attr]
    assert isinstance(__import__("json").loads(text)["answer"], int)


# -- Fields and blocks of current replies ---------------------------------------------------------


def test_usage_has_todays_fields(client: anthropic.Anthropic) -> None:
    reply = both(
        client,
        max_tokens=1500,
        messages=[{"role": "user", "content": "Hi"}],
        thinking={"type": "enabled", "budget_tokens": 1024},
    )
    usage = reply.usage
    assert usage.inference_geo == "global" and usage.output_tokens_details is not None
    assert usage.output_tokens_details.thinking_tokens == 1024 and usage.server_tool_use is None
    assert usage.cache_creation is not None and usage.cache_creation.ephemeral_1h_input_tokens == 0
    assert reply.stop_details is None
    here = client.messages.create(
        model=OPUS, max_tokens=50, messages=[{"role": "user", "content": "Hi"}], inference_geo="us"
    )
    assert here.usage.inference_geo == "us"


def test_the_documented_test_prompt_gets_redacted_thinking(client: anthropic.Anthropic) -> None:
    prompt = "ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING_46C9A13E193C177646C7398A98432ECCCE4C1253D5E2D8264"
    reply = both(
        client,
        max_tokens=1500,
        messages=[{"role": "user", "content": prompt}],
        thinking={"type": "enabled", "budget_tokens": 1024},
    )
    assert kinds(reply) == ["redacted_thinking", "text"] and reply.content[0].data  # type: ignore[union-attr]


def test_compaction_summarises_a_prompt_past_its_trigger(client: anthropic.Anthropic) -> None:
    long = "The quick brown fox jumps over the lazy dog. " * 400
    edit = {"edits": [{"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 2000}}]}
    reply = both(
        client,
        beta=True,
        max_tokens=300,
        messages=[{"role": "user", "content": long + "Say hi."}],
        context_management=edit,
    )
    assert kinds(reply) == ["compaction", "text"] and reply.content[0].content
    assert [i.type for i in reply.usage.iterations] == ["compaction", "message"]
    assert reply.context_management is not None and reply.context_management.applied_edits == []
    short = client.beta.messages.create(
        model=OPUS, max_tokens=300, messages=[{"role": "user", "content": "Hi"}], context_management=edit
    )  # type: ignore[arg-type]
    assert kinds(short) == ["text"] and [i.type for i in short.usage.iterations or ()] == ["message"]
    assert short.context_management is not None and short.context_management.applied_edits == []
    history = [
        {"role": "user", "content": long},
        {"role": "assistant", "content": [reply.content[0].to_dict()]},
        {"role": "user", "content": "And again?"},
    ]
    assert client.beta.messages.create(model=OPUS, max_tokens=100, messages=history).content  # type: ignore[arg-type]


# -- An agent loop --------------------------------------------------------------------------------


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_stream"])
def test_a_pydantic_ai_agent_with_server_tools_and_an_output_tool_ends(
    claude_server: MockServer, streamed: bool
) -> None:
    from pydantic_ai import Agent, CodeExecutionTool, WebSearchTool
    from pydantic_ai.capabilities import NativeTool
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    class Report(pydantic.BaseModel):
        city: str
        summary: str

    asked: list[str] = []

    async def run() -> tuple[Report, list[Any]]:
        async with anthropic.AsyncAnthropic(
            base_url=claude_server.url, api_key=PREVIEW_KEY, max_retries=0, _strict_response_validation=True
        ) as client:
            model = AnthropicModel(OPUS, provider=AnthropicProvider(anthropic_client=client))
            tools = [NativeTool(WebSearchTool()), NativeTool(CodeExecutionTool())]
            agent = Agent(model, output_type=Report, capabilities=tools)

            @agent.tool_plain
            def get_weather(city: str) -> str:
                """The weather in a city."""
                asked.append(city)
                return "Sunny, 21 °C"

            prompt = 'Search "Oslo weather" and report on Oslo.'
            if streamed:
                async with agent.run_stream(prompt) as result:
                    return await result.get_output(), result.all_messages()
            done = await agent.run(prompt)
            return done.output, done.all_messages()

    output, messages = asyncio.run(run())
    assert isinstance(output, Report) and asked
    parts = [type(part).__name__ for message in messages for part in message.parts]
    assert "NativeToolReturnPart" in parts and parts[-1] == "ToolReturnPart"


def test_a_tool_reference_in_a_tool_result_loads_the_deferred_tool_which_is_called_next(
    client: anthropic.Anthropic,
) -> None:
    search = {
        "name": "search_tools",
        "description": "Finds tools.",
        "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}},
    }
    found = [{"type": "tool_reference", "tool_name": "get_exchange_rate"}]
    messages = [
        {"role": "user", "content": "Can you convert currencies?"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_01S", "name": "search_tools", "input": {"query": "rates"}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01S", "content": found}]},
    ]
    reply = client.messages.create(model=OPUS, max_tokens=300, messages=messages, tools=[search, RATES, STOCKS])  # type: ignore[arg-type, list-item]
    assert [b.name for b in reply.content if b.type == "tool_use"] == ["get_exchange_rate"]
    without = client.messages.create(model=OPUS, max_tokens=300, messages=messages[:1], tools=[search, RATES])  # type: ignore[arg-type, list-item]
    assert [b.name for b in without.content if b.type == "tool_use"] == ["search_tools"]  # the deferred one is hidden


def test_faults_apply_to_server_tool_replies(client: anthropic.Anthropic) -> None:
    ask = [{"role": "user", "content": 'Search for "tides".'}]
    with pytest.raises(anthropic.InternalServerError):
        client.messages.create(
            model=OPUS, max_tokens=300, messages=ask, tools=[WEB_SEARCH], extra_headers={"x-mock-fault": "status=500"}
        )  # type: ignore[arg-type, list-item]
    with (
        pytest.raises(anthropic.APIError),
        client.messages.stream(
            model=OPUS,
            max_tokens=300,
            messages=ask,  # type: ignore[arg-type]
            tools=[WEB_SEARCH],  # type: ignore[list-item]
            extra_headers={"x-mock-fault": "error_event_after=2"},
        ) as stream,
    ):
        stream.get_final_message()


def test_a_forced_loop_moves_from_the_work_tool_to_the_output_tool(client: anthropic.Anthropic) -> None:
    final = {
        "name": "final_result",
        "description": "The final response which ends this conversation",
        "input_schema": {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]},
    }
    tools = [WEATHER, final]
    history: list[Any] = [{"role": "user", "content": "Weather in Oslo?"}]
    first = both(client, max_tokens=300, messages=history, tools=tools, tool_choice={"type": "any"})
    [call] = [b for b in first.content if b.type == "tool_use"]
    assert call.name == "get_weather" and kinds(first) == ["tool_use"]
    history += [
        {"role": "assistant", "content": [b.to_dict() for b in first.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "Sunny"}]},
    ]
    second = both(client, max_tokens=300, messages=history, tools=tools, tool_choice={"type": "any"})
    assert [b.name for b in second.content if b.type == "tool_use"] == ["final_result"]
    assert second.stop_reason == "tool_use"


@pytest.mark.parametrize(
    ("tool", "given"),
    [
        ({"type": "bash_20250124", "name": "bash"}, {"command": "ls"}),
        ({"type": "memory_20250818", "name": "memory"}, {"command": "view", "path": "/memories"}),
        (
            {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"},
            {"command": "view", "path": "/tmp/notes.txt"},
        ),
    ],
)
def test_anthropic_defined_client_tools_are_called_with_their_documented_input(
    client: anthropic.Anthropic, tool: dict[str, Any], given: dict[str, Any]
) -> None:
    ask = [{"role": "user", "content": "Go on."}]
    reply = both(client, max_tokens=200, messages=ask, tools=[tool], tool_choice={"type": "any"})
    assert [(b.name, b.input) for b in reply.content if b.type == "tool_use"] == [(tool["name"], given)]


def test_omitted_thinking_shows_only_its_signature(client: anthropic.Anthropic) -> None:
    thinking = {"type": "enabled", "budget_tokens": 1024, "display": "omitted"}
    reply = both(client, max_tokens=1500, messages=[{"role": "user", "content": "Hi"}], thinking=thinking)
    block = reply.content[0]
    assert block.type == "thinking" and block.thinking == "" and block.signature
    assert reply.usage.output_tokens_details is not None and reply.usage.output_tokens_details.thinking_tokens == 1024


def test_a_document_sent_with_citations_enabled_is_cited(client: anthropic.Anthropic) -> None:
    text = "The grass is green. The sky is blue. Water is wet."
    document = {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": text},
        "title": "Facts",
        "citations": {"enabled": True},
    }
    ask = [{"role": "user", "content": [document, {"type": "text", "text": "What colour is the grass?"}]}]
    reply = both(client, max_tokens=300, messages=ask)
    [cited] = [b for b in reply.content if b.type == "text" and b.citations]
    citation = cited.citations[0]  # type: ignore[index]
    assert citation.type == "char_location" and citation.document_index == 0 and citation.document_title == "Facts"
    assert text[citation.start_char_index : citation.end_char_index] == citation.cited_text  # type: ignore[union-attr]
    plain = {**document, "citations": {"enabled": False}}
    uncited = client.messages.create(
        model=OPUS, max_tokens=300, messages=[{"role": "user", "content": [plain, {"type": "text", "text": "Hi"}]}]
    )  # type: ignore[list-item]
    assert not any(b.citations for b in uncited.content if b.type == "text")


def test_the_older_python_code_execution_tool_runs_code_with_its_own_result_block(
    client: anthropic.Anthropic,
) -> None:
    older = {"type": "code_execution_20250522", "name": "code_execution"}
    ask = [{"role": "user", "content": "Calculate 3 * 12390 with code."}]
    reply = both(client, beta=True, max_tokens=400, messages=ask, tools=[older])
    use = next(b for b in reply.content if b.type == "server_tool_use")
    assert use.name == "code_execution" and use.input == {"code": "print('37170')"}
    result = next(b for b in reply.content if b.type == "code_execution_tool_result")
    assert result.content.type == "code_execution_result" and result.content.stdout == "37170\n"
    assert result.content.return_code == 0 and result.content.stderr == ""


def test_the_text_editor_views_the_file_it_created_when_asked(client: anthropic.Anthropic) -> None:
    ask = [{"role": "user", "content": "Create a file that says hi with the text editor, then view the file."}]
    reply = both(client, max_tokens=400, messages=ask, tools=[CODE])
    uses = [b.input["command"] for b in reply.content if b.type == "server_tool_use"]
    assert uses == ["create", "view"]
    created, viewed = (b for b in reply.content if b.type == "text_editor_code_execution_tool_result")
    assert created.content.type == "text_editor_code_execution_create_result"  # type: ignore[union-attr]
    shown: Any = viewed.content
    assert shown.type == "text_editor_code_execution_view_result" and shown.file_type == "text"
    written = next(b for b in reply.content if b.type == "server_tool_use").input["file_text"]  # type: ignore[index]
    assert shown.content == written and shown.num_lines == shown.total_lines == 1 and shown.start_line == 1


def test_a_server_call_left_in_flight_beside_an_answered_tool_call_gets_its_result(
    client: anthropic.Anthropic,
) -> None:
    add = {
        "name": "add",
        "description": "Add two numbers.",
        "input_schema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}},
    }
    history: Any = [
        {"role": "user", "content": "Look up the Oslo population, then add 2 and 2."},
        {
            "role": "assistant",
            "content": [
                {"type": "server_tool_use", "id": "srvtoolu_01A", "name": "web_search", "input": {"query": "Oslo"}},
                {"type": "tool_use", "id": "toolu_01B", "name": "add", "input": {"a": 2, "b": 2}},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01B", "content": "4"}]},
    ]
    reply = both(client, max_tokens=400, messages=history, tools=[add, WEB_SEARCH])
    result = next(b for b in reply.content if b.type == "web_search_tool_result")
    assert result.tool_use_id == "srvtoolu_01A" and reply.stop_reason == "end_turn"
    assert any(b.type == "text" and b.citations for b in reply.content)


@pytest.mark.parametrize(
    "request_fields",
    [
        {"context_management": {"edits": [{"type": "compact_20260112"}]}},
        {"output_config": {"task_budget": {"type": "tokens", "total": 20000}}},
    ],
    ids=["context-management", "task-budget"],
)
def test_context_management_or_a_task_budget_lists_the_models_pass_in_usage(
    client: anthropic.Anthropic, request_fields: dict[str, Any]
) -> None:
    ask = [{"role": "user", "content": "Say hello."}]
    reply = both(client, beta=True, max_tokens=200, messages=ask, **request_fields)
    [single] = reply.usage.iterations
    assert single.type == "message" and single.output_tokens == reply.usage.output_tokens
    assert single.input_tokens == reply.usage.input_tokens
    managed = "context_management" in request_fields
    assert (reply.context_management is not None) == managed
    if managed:
        assert reply.context_management.applied_edits == []


def test_a_deferred_tool_a_tool_result_names_is_called_next(client: anthropic.Anthropic) -> None:
    search = {
        "name": "search_tools",
        "description": "Find more tools by keyword.",
        "input_schema": {"type": "object", "properties": {"queries": {"type": "array", "items": {"type": "string"}}}},
    }
    found = '{"discovered_tools": [{"name": "get_exchange_rate", "description": "The exchange rate."}]}'
    history: Any = [
        {"role": "user", "content": "What is the USD to EUR rate?"},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "toolu_01S", "name": "search_tools", "input": {"queries": ["rate"]}}
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01S", "content": found}]},
    ]
    reply = both(client, max_tokens=400, messages=history, tools=[WEATHER, RATES, search])
    call = next(b for b in reply.content if b.type == "tool_use")
    assert call.name == "get_exchange_rate" and reply.stop_reason == "tool_use"
