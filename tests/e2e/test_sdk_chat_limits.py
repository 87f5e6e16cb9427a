"""Chat Completions: output limits (reasoning included), output caps, stream_options and tool history."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest

from mockserver.api.openai.chat import completions
from mockserver.api.openai.schemas import ChatCompletionRequest
from mockserver.config.fixture import load_fixture
from mockserver.config.settings import Settings
from mockserver.engine.pacing import FakeClock
from mockserver.server_state import ServerState
from mockserver.service import access, output_limits
from tests.conftest import PREVIEW_KEY

MESSAGES: list[Any] = [{"role": "user", "content": "Write a haiku about speed."}]
MINI = "gpt-5.6-mini"


def test_reasoning_counts_against_max_completion_tokens(client: openai.OpenAI) -> None:
    completion = client.chat.completions.create(
        model=MINI, messages=MESSAGES, reasoning_effort="high", max_completion_tokens=5
    )
    [choice] = completion.choices
    assert choice.finish_reason == "length"
    assert choice.message.content == ""
    assert completion.usage is not None and completion.usage.completion_tokens_details is not None
    assert completion.usage.completion_tokens == 5
    assert completion.usage.completion_tokens_details.reasoning_tokens == 5


def test_reasoning_cut_applies_per_choice_and_to_max_tokens(client: openai.OpenAI) -> None:
    completion = client.chat.completions.create(
        model=MINI, messages=MESSAGES, reasoning_effort="low", max_tokens=70, n=3, seed=4
    )
    assert completion.usage is not None and completion.usage.completion_tokens_details is not None
    assert completion.usage.completion_tokens_details.reasoning_tokens == 3 * 64
    assert completion.usage.completion_tokens == 3 * 70
    for choice in completion.choices:
        assert choice.finish_reason == "length"
        assert choice.message.content  # 6 tokens of text after 64 of reasoning


def test_reasoning_below_the_limit_leaves_the_answer_whole(client: openai.OpenAI) -> None:
    plain = client.chat.completions.create(model=MINI, messages=MESSAGES, reasoning_effort="low", seed=5)
    limited = client.chat.completions.create(
        model=MINI, messages=MESSAGES, reasoning_effort="low", seed=5, max_completion_tokens=10_000
    )
    assert limited.choices[0].finish_reason == "stop"
    assert limited.choices[0].message.content == plain.choices[0].message.content
    assert limited.usage == plain.usage


def test_stream_cut_inside_reasoning(client: openai.OpenAI) -> None:
    chunks = list(
        client.chat.completions.create(
            model=MINI,
            messages=MESSAGES,
            reasoning_effort="high",
            max_completion_tokens=5,
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert content == ""
    assert chunks[-2].choices[0].finish_reason == "length"
    usage = chunks[-1].usage
    assert usage is not None and usage.completion_tokens == 5


def test_the_schedule_covers_only_the_tokens_produced() -> None:
    fixture = load_fixture()
    state = ServerState(settings=Settings(time_scale=1), fixture=fixture, clock=FakeClock())
    account = fixture.account(PREVIEW_KEY)
    assert account is not None
    admission = access.resolve(fixture, account, {}, MINI, None)
    raw = {"model": MINI, "messages": MESSAGES, "reasoning_effort": "high", "max_completion_tokens": 5}
    body = ChatCompletionRequest.model_validate(raw)
    plan = completions.plan_chat_completion(state, admission, body, raw)
    assert plan.schedule.total_tokens == 5
    assert plan.reasoning_steps == 5 and plan.text_steps == 0


# -- Output caps --------------------------------------------------------------------------------


@pytest.mark.parametrize("param", ["max_tokens", "max_completion_tokens"])
def test_output_limit_above_the_model_cap_is_refused(client: openai.OpenAI, param: str) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model=MINI, messages=MESSAGES, **{param: 200_000})  # type: ignore[call-overload]
    assert caught.value.param == param and caught.value.code == "invalid_value"
    assert caught.value.body["message"] == (  # type: ignore[index]
        f"{param} is too large: 200000. This model supports at most 128000 completion tokens, "
        "whereas you provided 200000."
    )


def test_output_limit_at_the_model_cap_is_accepted(client: openai.OpenAI) -> None:
    completion = client.chat.completions.create(model=MINI, messages=MESSAGES, max_completion_tokens=128_000)
    assert completion.choices[0].finish_reason == "stop"


def test_max_output_tokens_above_the_model_cap_is_refused(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=MINI, input="Hi", max_output_tokens=128_001)
    assert caught.value.param == "max_output_tokens" and caught.value.code == "invalid_value"
    assert "max_output_tokens is too large: 128001. This model supports at most 128000" in caught.value.message


def test_too_many_choices_of_long_output_are_refused(http: httpx.Client) -> None:
    body = {"model": MINI, "messages": MESSAGES, "n": 100, "max_completion_tokens": 20_000}
    headers = {"x-mock-output-tokens": "20000"}
    reply = http.post("/v1/chat/completions", json=body, headers=headers)
    assert reply.status_code == 400
    error = reply.json()["error"]
    assert error["param"] == "n" and error["code"] == "invalid_value"
    assert error["message"].startswith("Invalid 'n': 100 choices of up to 20000 output tokens each is 2000000 tokens")
    assert str(output_limits.MAX_REQUEST_OUTPUT_TOKENS) in error["message"]


def test_many_short_choices_are_fine_whatever_the_limit(client: openai.OpenAI) -> None:
    completion = client.chat.completions.create(
        model=MINI, messages=MESSAGES, n=100, max_completion_tokens=128_000, reasoning_effort="none"
    )
    assert len(completion.choices) == 100


# -- stream_options ------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, None])
def test_stream_options_without_stream_is_refused(client: openai.OpenAI, stream: bool | None) -> None:
    extra = {} if stream is None else {"stream": stream}
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(
            model=MINI, messages=MESSAGES, stream_options={"include_usage": True}, extra_body=extra
        )
    assert caught.value.param == "stream_options"
    assert caught.value.code == "invalid_value"
    assert caught.value.message.endswith("The 'stream_options' parameter is only allowed when 'stream' is enabled.")


# -- Tool-call history ---------------------------------------------------------------------------

CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}
ASK = {"role": "user", "content": "Weather in Paris?"}


def history_error(client: openai.OpenAI, messages: list[Any]) -> openai.BadRequestError:
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model=MINI, messages=messages)
    return caught.value


@pytest.mark.parametrize(
    ("tool_calls", "param", "expected"),
    [
        ("x", "messages[1].tool_calls", "expected an array, but got a string instead."),
        (["x"], "messages[1].tool_calls[0]", "expected an object, but got a string instead."),
    ],
)
def test_tool_calls_must_be_an_array_of_objects(
    client: openai.OpenAI, tool_calls: Any, param: str, expected: str
) -> None:
    error = history_error(client, [ASK, {"role": "assistant", "tool_calls": tool_calls}])
    assert error.param == param and error.code == "invalid_type"
    assert error.message.endswith(f"Invalid type for '{param}': {expected}")


def test_tool_call_needs_an_id(client: openai.OpenAI) -> None:
    call = {k: v for k, v in CALL.items() if k != "id"}
    error = history_error(client, [ASK, {"role": "assistant", "tool_calls": [call]}])
    assert error.param == "messages[1].tool_calls[0].id" and error.code == "missing_required_parameter"


def test_tool_message_without_tool_call_id(client: openai.OpenAI) -> None:
    error = history_error(client, [ASK, {"role": "assistant", "tool_calls": [CALL]}, {"role": "tool", "content": "21"}])
    assert error.param == "messages[2].tool_call_id" and error.code is None
    assert error.message.endswith(
        "Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'."
    )


def test_tool_message_with_an_unknown_tool_call_id(client: openai.OpenAI) -> None:
    tool = {"role": "tool", "tool_call_id": "call_nope", "content": "21"}
    error = history_error(client, [ASK, {"role": "assistant", "tool_calls": [CALL]}, tool])
    assert error.param == "messages[2].tool_call_id"
    assert error.message.endswith(
        "Invalid parameter: 'tool_call_id' of 'call_nope' not found in 'tool_calls' of previous message."
    )


TOOL_RESULT = {"role": "tool", "tool_call_id": "call_1", "content": "21"}


@pytest.mark.parametrize(
    "messages",
    [
        [ASK, TOOL_RESULT],
        [ASK, {"role": "assistant", "content": "Let me check."}, TOOL_RESULT],
        [ASK, {"role": "assistant", "tool_calls": [CALL]}, TOOL_RESULT, ASK, TOOL_RESULT],
    ],
    ids=["first", "after-text", "after-a-later-user-message"],
)
def test_tool_message_must_follow_tool_calls(client: openai.OpenAI, messages: list[Any]) -> None:
    error = history_error(client, messages)
    assert error.param == f"messages[{len(messages) - 1}].role" and error.code is None
    assert error.message.endswith(
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."
    )


def test_every_tool_call_needs_its_result(client: openai.OpenAI) -> None:
    second = {**CALL, "id": "call_2"}
    messages = [
        ASK,
        {"role": "assistant", "tool_calls": [CALL, second]},
        {"role": "tool", "tool_call_id": "call_1", "content": "21"},
        ASK,
    ]
    error = history_error(client, messages)
    assert error.param == "messages[1].role"
    assert error.message.endswith(
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
        "'tool_call_id'. The following tool_call_ids did not have response messages: call_2"
    )


def test_parallel_tool_results_are_accepted(client: openai.OpenAI) -> None:
    second = {**CALL, "id": "call_2"}
    messages = [
        ASK,
        {"role": "assistant", "content": None, "tool_calls": [CALL, second]},
        {"role": "tool", "tool_call_id": "call_2", "content": "21"},
        {"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "19"}]},
    ]
    completion = client.chat.completions.create(model=MINI, messages=messages)
    assert completion.choices[0].finish_reason == "stop"
