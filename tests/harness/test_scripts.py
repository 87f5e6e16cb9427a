"""Scripted replies through the official SDK with strict validation: text, tool calls, errors, sequences."""

from __future__ import annotations

import json
from typing import Any

import httpx
import openai
import pytest

from mockserver import errors
from mockserver.api.openai.chat import completions
from mockserver.api.openai.schemas import ChatCompletionRequest
from mockserver.config.fixture import ConfigError, load_fixture, parse_fixture
from mockserver.config.script_rules import ScriptRule
from mockserver.config.settings import Settings
from mockserver.engine import tokens
from mockserver.engine.pacing import FakeClock
from mockserver.server_state import ServerState
from mockserver.service import access
from mockserver.testing.handle import MockServerHandle
from mockserver.testing.patches import config_patch

MODEL = "gpt-5.6-sol"
ANSWER = "The capital of France is Paris, a city of about two million people on the Seine."
CAPITAL = {"(?i)capital of france": ANSWER}
PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
    "required": ["city", "unit"],
    "additionalProperties": False,
}
CHAT_TOOLS: list[Any] = [{"type": "function", "function": {"name": "get_weather", "parameters": PARAMS}}]
RESPONSES_TOOLS: list[Any] = [{"type": "function", "name": "get_weather", "parameters": PARAMS}]
WEATHER_ARGS = {"city": "Paris", "unit": "celsius"}
WEATHER_CALL = {"tool_calls": [{"name": "get_weather", "arguments": WEATHER_ARGS}]}


def ask(text: str) -> list[Any]:
    return [{"role": "user", "content": text}]


def client(mockserver: MockServerHandle, **kwargs: Any) -> openai.OpenAI:
    kwargs.setdefault("max_retries", 0)
    return mockserver.client(strict=True, **kwargs)


# -- text -------------------------------------------------------------------------------------


def test_text_reply_on_chat_plain_and_streamed_with_exact_usage(mockserver: MockServerHandle) -> None:
    mockserver.configure(scripts=CAPITAL)
    sdk = client(mockserver)
    plain = sdk.chat.completions.create(model=MODEL, messages=ask("What is the capital of France?"))
    assert plain.choices[0].message.content == ANSWER
    assert plain.choices[0].finish_reason == "stop"
    assert plain.usage is not None and plain.usage.completion_tokens == tokens.count(ANSWER)

    kwargs: dict[str, Any] = {"model": MODEL, "messages": ask("capital of France?")}
    with sdk.chat.completions.stream(**kwargs, stream_options={"include_usage": True}) as stream:
        final = stream.get_final_completion()
    assert final.choices[0].message.content == ANSWER
    assert final.usage is not None and final.usage.completion_tokens == tokens.count(ANSWER)
    chunks = list(sdk.chat.completions.create(stream=True, **kwargs))
    deltas = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert "".join(d or "" for d in deltas) == ANSWER
    assert [c.script for c in mockserver.requests] == [{"index": 0, "name": None, "step": None}] * 3


def test_text_reply_on_responses_plain_and_streamed_with_exact_usage(mockserver: MockServerHandle) -> None:
    mockserver.configure(scripts=CAPITAL)
    sdk = client(mockserver)
    plain = sdk.responses.create(model=MODEL, input="What is the capital of France?")
    assert plain.output_text == ANSWER and plain.status == "completed"
    assert plain.usage is not None and plain.usage.output_tokens == tokens.count(ANSWER)
    with sdk.responses.stream(model=MODEL, input=ask("And the capital of France?")) as stream:
        final = stream.get_final_response()
    assert final.output_text == ANSWER
    assert final.usage is not None and final.usage.output_tokens == tokens.count(ANSWER)
    assert mockserver.requests.last.usage["output_tokens"] == tokens.count(ANSWER)


def test_output_limits_cut_a_scripted_text(mockserver: MockServerHandle) -> None:
    mockserver.configure(scripts=CAPITAL)
    sdk = client(mockserver)
    cut = "".join(tokens.split(ANSWER)[:5])
    chat = sdk.chat.completions.create(model=MODEL, messages=ask("capital of France"), max_completion_tokens=5)
    assert chat.choices[0].finish_reason == "length" and chat.choices[0].message.content == cut
    stream = sdk.chat.completions.stream(model=MODEL, messages=ask("capital of France"), max_tokens=5)
    with stream as events, pytest.raises(openai.LengthFinishReasonError) as caught:  # the helper's answer
        events.get_final_completion()
    assert caught.value.completion.choices[0].message.content == cut
    response = sdk.responses.create(model=MODEL, input="capital of France", max_output_tokens=16)
    assert response.status == "incomplete"
    assert response.incomplete_details is not None and response.incomplete_details.reason == "max_output_tokens"
    assert response.output_text == "".join(tokens.split(ANSWER)[:16])


def test_reasoning_still_comes_before_a_scripted_text(mockserver: MockServerHandle) -> None:
    mockserver.configure(scripts=CAPITAL)
    reply = client(mockserver).responses.create(model=MODEL, input="capital of France", reasoning={"effort": "low"})
    assert reply.output_text == ANSWER
    assert reply.usage is not None and reply.usage.output_tokens_details.reasoning_tokens == 64
    assert reply.usage.output_tokens == 64 + tokens.count(ANSWER)


# -- matching ---------------------------------------------------------------------------------


def test_message_regex_reads_the_latest_user_message_only(mockserver: MockServerHandle) -> None:
    mockserver.configure(scripts={"(?i)^ping$": "pong"})
    sdk = client(mockserver)
    assert sdk.chat.completions.create(model=MODEL, messages=ask("PING")).choices[0].message.content == "pong"
    history = [*ask("ping"), {"role": "assistant", "content": "pong"}, *ask("Tell me more.")]
    later = sdk.chat.completions.create(model=MODEL, messages=history).choices[0].message.content
    assert later != "pong"
    assert [c.script is not None for c in mockserver.requests] == [True, False]


def test_turn_counts_user_messages_on_both_apis(mockserver: MockServerHandle) -> None:
    mockserver.configure(scripts=[{"match": {"turn": 1}, "reply": {"text": "first"}},
                                  {"match": {"turn": 2}, "reply": {"text": "second"}}])  # fmt: skip
    sdk = client(mockserver)
    chat = [{"role": "system", "content": "Be brief."}, *ask("Hi")]
    assert sdk.chat.completions.create(model=MODEL, messages=chat).choices[0].message.content == "first"
    chat += [{"role": "assistant", "content": "first"}, *ask("Again")]
    assert sdk.chat.completions.create(model=MODEL, messages=chat).choices[0].message.content == "second"
    first = sdk.responses.create(model=MODEL, input="Hi")
    assert first.output_text == "first"
    # previous_response_id brings the earlier user turn along
    assert sdk.responses.create(model=MODEL, input="Again", previous_response_id=first.id).output_text == "second"


def test_model_tier_key_and_path_narrow_a_rule(mockserver: MockServerHandle) -> None:
    mockserver.configure(
        scripts=[
            {"match": {"model": "gpt-5.6-mini"}, "reply": {"text": "mini"}},
            {"match": {"tier": "ultrafast"}, "reply": {"text": "fast"}},
            {"match": {"key": "sk-mock-standard"}, "reply": {"text": "standard"}},
            {"match": {"path": "/v1/responses"}, "reply": {"text": "responses"}},
        ]
    )
    sdk = client(mockserver)
    assert sdk.chat.completions.create(model="gpt-5.6-mini", messages=ask("x")).choices[0].message.content == "mini"
    fast = sdk.chat.completions.create(model="gpt-5.6-sol-ultrafast", messages=ask("x"))
    assert fast.choices[0].message.content == "fast"
    standard = mockserver.client("sk-mock-standard", strict=True)
    assert standard.chat.completions.create(model=MODEL, messages=ask("x")).choices[0].message.content == "standard"
    assert sdk.responses.create(model=MODEL, input="x").output_text == "responses"
    generated = sdk.chat.completions.create(model=MODEL, messages=ask("x")).choices[0].message.content
    assert generated not in ("mini", "fast", "standard", "responses")
    assert mockserver.requests.last.script is None


# -- tool calls -------------------------------------------------------------------------------


def test_tool_call_reply_on_chat_plain_and_streamed(mockserver: MockServerHandle) -> None:
    mockserver.configure(scripts={"(?i)weather": WEATHER_CALL})
    sdk = client(mockserver)
    kwargs: dict[str, Any] = {"model": MODEL, "messages": ask("What's the weather in Paris?"), "tools": CHAT_TOOLS}
    plain = sdk.chat.completions.create(**kwargs)
    choice = plain.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content is None
    [call] = choice.message.tool_calls or []
    assert call.type == "function" and call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == WEATHER_ARGS
    assert plain.usage is not None and plain.usage.completion_tokens == tokens.count(call.function.arguments)
    with sdk.chat.completions.stream(**kwargs) as stream:
        final = stream.get_final_completion()
    [streamed] = final.choices[0].message.tool_calls or []
    assert streamed.function.name == "get_weather"
    assert json.loads(streamed.function.arguments) == WEATHER_ARGS
    assert final.choices[0].finish_reason == "tool_calls"


def test_tool_call_reply_on_responses_plain_and_streamed(mockserver: MockServerHandle) -> None:
    mockserver.configure(scripts={"(?i)weather": WEATHER_CALL})
    sdk = client(mockserver)
    kwargs: dict[str, Any] = {"model": MODEL, "input": "What's the weather in Paris?", "tools": RESPONSES_TOOLS}
    plain = sdk.responses.create(**kwargs)
    [call] = plain.output
    assert call.type == "function_call" and call.name == "get_weather"
    assert json.loads(call.arguments) == WEATHER_ARGS
    with sdk.responses.stream(**kwargs) as stream:
        final = stream.get_final_response()
    [streamed] = final.output
    assert streamed.type == "function_call" and json.loads(streamed.arguments) == WEATHER_ARGS


def test_string_arguments_are_sent_verbatim(mockserver: MockServerHandle) -> None:
    raw = '{"city": "Paris", "unit": "celsius"}'
    mockserver.configure(scripts=[{"tool_calls": [{"name": "get_weather", "arguments": raw}]}])
    reply = client(mockserver).chat.completions.create(model=MODEL, messages=ask("Hi"), tools=CHAT_TOOLS)
    assert (reply.choices[0].message.tool_calls or [])[0].function.arguments == raw  # type: ignore[union-attr]


def test_a_tool_that_is_not_offered_falls_through(mockserver: MockServerHandle) -> None:
    mockserver.configure(scripts=[{"match": {"message": "weather"}, "reply": WEATHER_CALL},
                                  {"match": {"message": "weather"}, "reply": {"text": "No tools today."}}])  # fmt: skip
    sdk = client(mockserver)
    no_tools = sdk.chat.completions.create(model=MODEL, messages=ask("weather?"))
    assert no_tools.choices[0].message.content == "No tools today."
    assert mockserver.requests.last.script["index"] == 1
    other: list[Any] = [{"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}]
    assert sdk.chat.completions.create(model=MODEL, messages=ask("weather?"), tools=other).choices[0].message.content
    refused = sdk.chat.completions.create(model=MODEL, messages=ask("weather?"), tools=CHAT_TOOLS, tool_choice="none")
    assert refused.choices[0].message.content == "No tools today."


def test_after_the_tool_result_the_next_rule_answers(mockserver: MockServerHandle) -> None:
    mockserver.configure(scripts=[{"match": {"message": "weather"}, "reply": WEATHER_CALL},
                                  {"match": {"message": "weather"}, "reply": {"text": "Sunny, 24 C."}}])  # fmt: skip
    sdk = client(mockserver)
    first = sdk.responses.create(model=MODEL, input="weather in Paris?", tools=RESPONSES_TOOLS)
    [call] = first.output
    assert call.type == "function_call"
    result: list[Any] = [{"type": "function_call_output", "call_id": call.call_id, "output": '{"temp": 24}'}]
    final = sdk.responses.create(model=MODEL, input=result, previous_response_id=first.id, tools=RESPONSES_TOOLS)
    assert final.output_text == "Sunny, 24 C."


# -- errors -----------------------------------------------------------------------------------


def test_error_reply_raises_the_sdk_class_with_retry_headers(mockserver: MockServerHandle) -> None:
    mockserver.configure(scripts={"(?i)busy": {"error": "status=429"}})
    with pytest.raises(openai.RateLimitError) as caught:
        client(mockserver).chat.completions.create(model=MODEL, messages=ask("are you busy?"))
    assert caught.value.code == "rate_limit_exceeded"
    assert caught.value.response.headers["retry-after-ms"] == "1"
    assert caught.value.request_id and caught.value.request_id.startswith("req_")
    call = mockserver.requests.last
    assert call.status == 429 and call.script == {"index": 0, "name": None, "step": None} and call.usage is None


def test_error_object_with_a_custom_message_on_responses(mockserver: MockServerHandle) -> None:
    mockserver.configure(
        scripts={"boom": {"error": {"status": 503, "code": "server_is_overloaded", "message": "Try later."}}}
    )
    with pytest.raises(openai.InternalServerError) as caught:
        client(mockserver).responses.create(model=MODEL, input="boom", stream=True)
    assert caught.value.code == "server_is_overloaded" and caught.value.message.endswith("Try later.")
    assert caught.value.response.headers["retry-after"] == "1"


def test_persistent_error_is_retried_by_the_sdk_then_raised(mockserver: MockServerHandle) -> None:
    mockserver.configure(scripts=[{"error": "status=500"}])
    with pytest.raises(openai.InternalServerError):
        mockserver.client().chat.completions.create(model=MODEL, messages=ask("x"))
    assert [c.status for c in mockserver.requests] == [500, 500, 500]


def test_error_then_text_sequence_succeeds_on_the_sdk_retry(mockserver: MockServerHandle) -> None:
    mockserver.configure(scripts=[{"name": "flaky", "reply": {"sequence": [{"error": "status=503"}, {"text": "ok"}]}}])
    reply = mockserver.client(strict=True).chat.completions.create(model=MODEL, messages=ask("x"))
    assert reply.choices[0].message.content == "ok"
    calls = mockserver.requests
    assert [c.status for c in calls] == [503, 200]
    assert [c.script for c in calls] == [{"index": 0, "name": "flaky", "step": s} for s in (0, 1)]


# -- sequences --------------------------------------------------------------------------------


def sequence(then: str | None = None) -> list[Any]:
    reply: dict[str, Any] = {"sequence": [{"text": "one"}, {"text": "two"}]}
    if then:
        reply["then"] = then
    return [{"reply": reply}]


def texts(sdk: openai.OpenAI, count: int) -> list[str | None]:
    replies = [sdk.chat.completions.create(model=MODEL, messages=ask("x")) for _ in range(count)]
    return [reply.choices[0].message.content for reply in replies]


def test_sequence_repeats_its_last_reply(mockserver: MockServerHandle) -> None:
    mockserver.configure(scripts=sequence())
    assert texts(client(mockserver), 4) == ["one", "two", "two", "two"]


def test_sequence_then_generate_stops_answering(mockserver: MockServerHandle) -> None:
    mockserver.configure(scripts=sequence("generate"))
    replies = texts(client(mockserver), 3)
    assert replies[:2] == ["one", "two"] and replies[2] not in ("one", "two")
    assert [c.script and c.script["step"] for c in mockserver.requests] == [0, 1, None]


def test_sequences_count_per_test_id_and_restart_on_reset(mockserver: MockServerHandle) -> None:
    mockserver.configure(scripts=sequence())
    mine, other = client(mockserver), client(mockserver, default_headers={"x-mock-test-id": "another-test"})
    assert texts(mine, 1) == ["one"]
    assert texts(other, 1) == ["one"]
    assert texts(mine, 1) == ["two"]
    mockserver.configure(scripts=sequence())  # the same rules keep their place
    assert texts(mine, 1) == ["two"]
    mockserver.reset()
    mockserver.configure(scripts=sequence())
    assert texts(mine, 1) == ["one"]
    mockserver.server.run(mockserver.server.state.reset_scope("another-test"))


def test_one_request_takes_one_step_whatever_its_choices_or_replanning(mockserver: MockServerHandle) -> None:
    mockserver.configure(scripts=sequence(), capacity={"ultrafast_concurrency": 0, "when_full": "downgrade"})
    sdk = client(mockserver)
    both = sdk.chat.completions.create(model=MODEL, messages=ask("x"), n=2)
    assert [c.message.content for c in both.choices] == ["one", "one"]
    # a full Ultrafast capacity plans the reply again at the default tier: still one step
    downgraded = sdk.chat.completions.create(model=MODEL, messages=ask("x"), extra_body={"service_tier": "ultrafast"})
    assert downgraded.service_tier == "default" and downgraded.choices[0].message.content == "two"


# -- configuration ----------------------------------------------------------------------------


def test_invalid_rules_are_config_errors_naming_the_field() -> None:
    base = load_fixture().model_dump(mode="json")
    cases = [
        ({"reply": {"text": "a", "error": "status=429"}}, "scripts.0.reply: a reply needs exactly one of"),
        ({"reply": {"error": "drop_after=3"}}, "not drop_after (stream faults belong in faults.rules)"),
        ({"match": {"message": "("}, "reply": {"text": "x"}}, "scripts.0.match.message: not a valid regular"),
        ({"match": {"turn": 0}, "reply": {"text": "x"}}, "scripts.0.match.turn"),
        ({"reply": {"text": "x", "then": "repeat"}}, "'then' applies to a sequence only"),
        ({"reply": {"tool_calls": [{"name": "f", "arguments": "[1]"}]}}, "must hold a JSON object"),
        ({"reply": {"error": "status=429;code=nope"}}, "status 429 has no variant 'nope'"),
        ({"reply": {"text": "x"}, "mtach": {}}, "scripts.0: unknown field `mtach`, did you mean `match`?"),
        ({"reply": {"error": {"status": 429, "retry_after": 1e300}}}, "less than or equal to 3600"),
    ]
    for rule, wording in cases:
        with pytest.raises(ConfigError, match=r"config file x\.yaml: ") as caught:
            parse_fixture({**base, "scripts": [rule]}, source="x.yaml")
        assert wording in str(caught.value), (rule, str(caught.value))


def test_patch_with_an_invalid_rule_is_a_400_and_changes_nothing(mockserver: MockServerHandle) -> None:
    with httpx.Client(base_url=mockserver.url) as http:
        bad = http.patch("/_mock/config", json={"scripts": [{"reply": {"sequence": []}}]})
        assert bad.status_code == 400
        assert bad.json()["error"]["param"] == "scripts.0.reply.sequence"
        assert http.get("/_mock/config").json()["scripts"] == []
        good = http.patch("/_mock/config", json={"scripts": [{"match": {"message": "^hi$"}, "reply": {"text": "yo"}}]})
        assert good.status_code == 200
        assert http.get("/_mock/config").json()["scripts"] == [{"match": {"message": "^hi$"}, "reply": {"text": "yo"}}]
        http.patch("/_mock/config", json={"scripts": None})
    with pytest.raises(errors.InvalidRequestError, match="a reply needs exactly one of"):
        mockserver.configure(scripts=[{"reply": {}}])


def test_config_patch_shortcuts() -> None:
    assert config_patch(scripts={"^a$": "b", "c": {"error": "status=500"}}) == {
        "scripts": [
            {"match": {"message": "^a$"}, "reply": {"text": "b"}},
            {"match": {"message": "c"}, "reply": {"error": "status=500"}},
        ]
    }
    rule = {"match": {"turn": 2}, "reply": {"text": "x"}}
    assert config_patch(scripts=["hi", rule]) == {"scripts": [{"reply": {"text": "hi"}}, rule]}


def test_a_scripted_text_is_paced_like_generated_text() -> None:
    fixture = load_fixture().model_copy(update={"scripts": [ScriptRule.model_validate({"reply": {"text": ANSWER}})]})
    state = ServerState(settings=Settings(time_scale=1), fixture=fixture, clock=FakeClock())
    account = fixture.account("sk-mock-preview")
    assert account is not None
    admission = access.resolve(fixture, account, {}, "gpt-5.6-sol-ultrafast", None)
    raw = {"model": "gpt-5.6-sol-ultrafast", "messages": ask("Hi")}
    plan = completions.plan_chat_completion(state, admission, ChatCompletionRequest.model_validate(raw), raw)
    assert plan.schedule.total_tokens == tokens.count(ANSWER)
    assert plan.schedule.interval == pytest.approx(1 / 750)
    assert plan.choices[0].text.text == ANSWER
