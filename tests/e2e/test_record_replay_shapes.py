"""Either shape answers either request: a recording made without a stream answers a streamed request
(Chat, Responses, Messages) with the stream its API sends, and a streamed recording answers a request
that is not streamed. Recorded from a real server through the proxy, replayed to the official SDKs in
strict mode, stream helpers included. ``/v1/models`` under replay lists the fixture's models.
"""

from __future__ import annotations

from typing import Any

from mockserver import MockServer
from mockserver.cassettes import files
from tests.e2e import test_record_replay as base
from tests.e2e.test_record_replay import MODEL, OPUS, WEATHER, _claude, _openai, _replaying

# The same upstream, recording proxy and strict clients (fixtures, used by name).
upstream, recorded, _close_clients = base.upstream, base.recorded, base._close_clients

CLAUDE_WEATHER = {
    "name": "get_weather",
    "description": "The weather in a city.",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
SALTY = [{"role": "user", "content": "Why is the sea salty?"}]
THINKING = {"type": "enabled", "budget_tokens": 1024}
REASONING = {"effort": "low", "summary": "auto"}
RESPONSE_EVENTS = [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.reasoning_summary_part.added",
    "response.reasoning_summary_text.delta",
    "response.reasoning_summary_text.done",
    "response.reasoning_summary_part.done",
    "response.output_item.done",
    "response.output_item.added",
    "response.content_part.added",
    "response.output_text.delta",
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
    "response.completed",
]


def _shown(model: Any) -> Any:
    """A model as data, less the fields the SDKs' stream helpers add (``parsed``, ``parsed_output``...)."""
    if hasattr(model, "model_dump"):
        model = model.model_dump()
    if isinstance(model, dict):
        return {k: _shown(v) for k, v in model.items() if not k.startswith("parsed")}
    if isinstance(model, list):
        return [_shown(v) for v in model]
    return model


def _deduplicated(kinds: list[str]) -> list[str]:
    """The event types in order, each run of deltas counted once."""
    return [k for i, k in enumerate(kinds) if i == 0 or k != kinds[i - 1] or not k.endswith(".delta")]


def _whole_responses(base_url: str, _: str) -> tuple[Any, Any]:
    client = _openai(base_url)
    answer = client.responses.create(model=MODEL, input="Why is the sea salty?", reasoning=REASONING)
    call = client.responses.create(model=MODEL, input="Weather in Paris?", tools=[WEATHER], tool_choice="required")
    return answer, call


def test_a_responses_recording_made_whole_answers_a_stream(recorded) -> None:
    cassette, (answer, call) = recorded(_whole_responses)
    assert not any(r.response.stream for r in files.load(cassette).records)
    with _replaying(cassette) as server:
        client = _openai(server.base_url)
        with client.responses.stream(model=MODEL, input="Why is the sea salty?", reasoning=REASONING) as stream:
            kinds = [event.type for event in stream]
            final = stream.get_final_response()
        assert _shown(final) == _shown(answer) and final.output_text == answer.output_text
        assert _deduplicated(kinds) == RESPONSE_EVENTS
        events = list(
            client.responses.create(
                model=MODEL, input="Weather in Paris?", tools=[WEATHER], tool_choice="required", stream=True
            )
        )
    assert [e.sequence_number for e in events] == list(range(len(events)))
    deltas = [e.delta for e in events if e.type == "response.function_call_arguments.delta"]
    recorded_call = call.output[-1]
    assert len(deltas) > 1 and "".join(deltas) == recorded_call.arguments
    added = next(e for e in events if e.type == "response.output_item.added" and e.item.type == "function_call")
    assert added.item.arguments == "" and added.item.call_id == recorded_call.call_id
    assert events[-1].type == "response.completed" and events[-1].response == call


def _whole_messages(_: str, root: str) -> tuple[Any, Any]:
    client = _claude(root)
    thought = client.messages.create(model=OPUS, max_tokens=2048, thinking=THINKING, messages=SALTY)
    tool = client.messages.create(
        model=OPUS, max_tokens=400, tools=[CLAUDE_WEATHER], tool_choice={"type": "any"}, messages=SALTY
    )
    return thought, tool


def test_a_messages_recording_made_whole_answers_a_stream(recorded) -> None:
    cassette, (thought, tool) = recorded(_whole_messages)
    assert [b.type for b in thought.content] == ["thinking", "text"] and tool.content[-1].type == "tool_use"
    with _replaying(cassette) as server:
        client = _claude(server.url)
        with client.messages.stream(model=OPUS, max_tokens=2048, thinking=THINKING, messages=SALTY) as stream:
            kinds = [(e.type, getattr(getattr(e, "delta", None), "type", None)) for e in stream]
            again = stream.get_final_message()
        with client.messages.stream(
            model=OPUS, max_tokens=400, tools=[CLAUDE_WEATHER], tool_choice={"type": "any"}, messages=SALTY
        ) as stream:
            again_tool = stream.get_final_message()
    shown = [b.model_dump(exclude={"parsed_output"}) for b in again.content]  # the stream helper's extra field
    assert shown == [b.model_dump() for b in thought.content]
    assert (again.id, again.usage, again.stop_reason) == (thought.id, thought.usage, thought.stop_reason)
    assert kinds[0] == ("message_start", None) and kinds[-2:] == [("message_delta", None), ("message_stop", None)]
    deltas = [d for _, d in kinds if d is not None]
    assert {"thinking_delta", "signature_delta", "text_delta"} <= set(deltas) and deltas.count("signature_delta") == 1
    assert again_tool.content[-1].input == tool.content[-1].input and again_tool.content[-1].id == tool.content[-1].id
    assert again_tool.stop_reason == "tool_use" and again_tool.usage == tool.usage


def _streamed_everything(base_url: str, root: str) -> tuple[Any, Any, Any, Any]:
    client = _openai(base_url)
    with client.responses.stream(
        model=MODEL, input="Weather in Paris?", tools=[WEATHER], tool_choice="required", reasoning=REASONING
    ) as stream:
        response = stream.get_final_response()
    chat = client.chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": "Weather in Paris?"}],
        tools=[{"type": "function", "function": {k: WEATHER[k] for k in ("name", "description", "parameters")}}],
        tool_choice="required",
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(chat)
    claude = _claude(root)
    with claude.messages.stream(model=OPUS, max_tokens=2048, thinking=THINKING, messages=SALTY) as stream:
        thought = stream.get_final_message()
    with claude.messages.stream(
        model=OPUS, max_tokens=400, tools=[CLAUDE_WEATHER], tool_choice={"type": "any"}, messages=SALTY
    ) as stream:
        tool = stream.get_final_message()
    return response, chunks, thought, tool


def test_a_streamed_recording_answers_a_request_made_whole(recorded) -> None:
    cassette, (response, chunks, thought, tool) = recorded(_streamed_everything)
    assert all(r.response.stream for r in files.load(cassette).records)
    with _replaying(cassette) as server:
        client = _openai(server.base_url)
        whole = client.responses.create(
            model=MODEL, input="Weather in Paris?", tools=[WEATHER], tool_choice="required", reasoning=REASONING
        )
        chat = client.chat.completions.create(
            model=MODEL,
            messages=[{"role": "user", "content": "Weather in Paris?"}],
            tools=[{"type": "function", "function": {k: WEATHER[k] for k in ("name", "description", "parameters")}}],
            tool_choice="required",
        )
        claude = _claude(server.url)
        whole_thought = claude.messages.create(model=OPUS, max_tokens=2048, thinking=THINKING, messages=SALTY)
        whole_tool = claude.messages.create(
            model=OPUS, max_tokens=400, tools=[CLAUDE_WEATHER], tool_choice={"type": "any"}, messages=SALTY
        )
    assert [o.type for o in whole.output] == ["reasoning", "function_call"] and _shown(whole) == _shown(response)
    calls = chat.choices[0].message.tool_calls or []
    streamed_arguments = "".join(
        c.choices[0].delta.tool_calls[0].function.arguments or ""
        for c in chunks
        if c.choices and c.choices[0].delta.tool_calls
    )
    assert len(calls) == 1 and calls[0].function.arguments == streamed_arguments
    assert calls[0].function.name == "get_weather" and chat.usage == chunks[-1].usage
    assert chat.choices[0].finish_reason == "tool_calls"
    for streamed, made_whole in ((thought, whole_thought), (tool, whole_tool)):
        assert [b.model_dump() for b in made_whole.content] == [
            b.model_dump(exclude={"parsed_output"}) for b in streamed.content
        ]
        assert (made_whole.id, made_whole.usage, made_whole.stop_reason) == (
            streamed.id,
            streamed.usage,
            streamed.stop_reason,
        )


def test_models_under_replay_list_the_fixtures_models(recorded) -> None:
    cassette, _ = recorded(lambda base_url, _: _openai(base_url).models.list())
    assert [r.api for r in files.load(cassette).records] == ["models"]
    with MockServer(time_scale=0, presets=["claude-opus-4.8-fast"]) as plain:
        expected = sorted(m.id for m in _openai(plain.base_url).models.list())
    with _replaying(cassette) as server:
        client = _openai(server.base_url)
        assert sorted(m.id for m in client.models.list()) == expected
        assert client.models.retrieve(MODEL).id == MODEL
        assert server.requests.filter(path="/v1/models").call_count == 1


CHAT_TOOLS: Any = [{"type": "function", "function": {k: WEATHER[k] for k in ("name", "description", "parameters")}}]
PARIS = [{"role": "user", "content": "Weather in Paris?"}]


def test_a_chat_completion_recorded_whole_answers_the_stream_helper(recorded) -> None:
    def whole(base_url: str, _: str) -> Any:
        return _openai(base_url).chat.completions.create(
            model=MODEL, messages=PARIS, tools=CHAT_TOOLS, tool_choice="required"
        )

    cassette, completion = recorded(whole)
    usage: Any = {"include_usage": True}
    with (
        _replaying(cassette) as server,
        _openai(server.base_url).chat.completions.stream(
            model=MODEL, messages=PARIS, tools=CHAT_TOOLS, tool_choice="required", stream_options=usage
        ) as stream,
    ):
        kinds = [event.type for event in stream]
        final = stream.get_final_completion()
    assert kinds.count("tool_calls.function.arguments.delta") > 1
    shown = _shown(final)
    for call in shown["choices"][0]["message"]["tool_calls"]:
        del call["index"]  # the stream helper keeps each call's stream index, as it does for a live stream
    assert shown == _shown(completion)
