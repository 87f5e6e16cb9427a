"""A body with a long list is validated a piece at a time: the same model, the same first problem as
one validation, and the event loop gets its turns; through the SDKs against a real server, a bad
message far down a long conversation gets the live 400 naming it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any
from unittest import mock

import anthropic
import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from mockserver import MockServer
from mockserver.api import validated_body
from mockserver.api.anthropic.schemas import MessagesRequest
from mockserver.api.openai.schemas import ChatCompletionRequest
from mockserver.api.validated_body import PIECE, BodyInvalid, validated
from mockserver.engine import tokens
from mockserver.engine.tokens import PromptMessage
from tests.support import with_loop_turns

KEY = "sk-mock-preview"
GOOD = {"role": "user", "content": "hello"}
# What a message may be turned into: each breaks the schema in its own way, or not at all.
CHAT_FAULTS: list[Any] = [
    {"role": "robot", "content": "hi"},
    {"role": "user", "content": 3},
    {"content": "no role"},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function"}]},
    "not an object",
    {"role": "user", "content": "fine", "extra": "allowed"},
]
ANTHROPIC_FAULTS: list[Any] = [
    {"role": "system", "content": "hi"},
    {"role": "user", "content": 3},
    {"role": "user", "content": "hi", "extra": "refused"},
    {"role": "assistant"},
]
TOP_FAULTS: list[dict[str, Any]] = [{}, {"stream": "yes"}, {"temperature": "warm"}, {"unknown_field": 1}]


def whole(model: type[BaseModel], body: dict[str, Any]) -> Any:
    """One validation of the whole body: the model, or the problems in pydantic's order."""
    try:
        return model.__pydantic_validator__.validate_python(body, strict=True)
    except ValidationError as exc:
        return [(e["type"], e["loc"]) for e in exc.errors()]


def in_pieces(model: type[BaseModel], body: dict[str, Any]) -> Any:
    try:
        return asyncio.run(validated(model, body))
    except BodyInvalid as exc:
        return [(e["type"], e["loc"]) for e in exc.problems]


def with_faults(count: int, faults: dict[int, Any]) -> list[Any]:
    return [faults.get(index, GOOD) for index in range(count)]


@settings(max_examples=150, deadline=None)
@given(
    count=st.integers(1, 40),
    faults=st.dictionaries(st.integers(0, 39), st.sampled_from(CHAT_FAULTS), max_size=3),
    top=st.sampled_from(TOP_FAULTS),
)
def test_chat_in_pieces_is_one_validation(count: int, faults: dict[int, Any], top: dict[str, Any]) -> None:
    body = {"model": "gpt-5.6-sol", "messages": with_faults(count, faults), **top}
    with mock.patch.object(validated_body, "PIECE", 4):
        got = in_pieces(ChatCompletionRequest, body)
    expected = whole(ChatCompletionRequest, body)
    if isinstance(expected, list):
        assert got == expected  # every problem, in the same order: the first one names the error
    else:
        assert isinstance(got, ChatCompletionRequest) and got == expected


@settings(max_examples=150, deadline=None)
@given(
    count=st.integers(1, 40),
    faults=st.dictionaries(st.integers(0, 39), st.sampled_from(ANTHROPIC_FAULTS), max_size=3),
    top=st.sampled_from([{}, {"max_tokens": -1}, {"stream": 1}, {"nope": True}, {"max_tokens": None}]),
)
def test_anthropic_in_pieces_is_one_validation(count: int, faults: dict[int, Any], top: dict[str, Any]) -> None:
    body = {"model": "claude-opus-4-8", "max_tokens": 8, "messages": with_faults(count, faults), **top}
    body = {key: value for key, value in body.items() if value is not None}
    with mock.patch.object(validated_body, "PIECE", 4):
        got = in_pieces(MessagesRequest, body)
    expected = whole(MessagesRequest, body)
    if isinstance(expected, list):
        assert got == expected
    else:
        assert isinstance(got, MessagesRequest) and got == expected


def test_a_long_list_gives_the_loop_its_turns() -> None:
    count = 40 * PIECE
    body = {"model": "gpt-5.6-sol", "messages": [{"role": "user", "content": f"line {n}"} for n in range(count)]}
    model, ran = with_loop_turns(lambda: validated(ChatCompletionRequest, body))
    assert [m.content for m in model.messages] == [f"line {n}" for n in range(count)]
    assert ran >= 39  # a turn between each two of the forty pieces


def test_a_short_body_is_one_validation() -> None:
    body = {"model": "gpt-5.6-sol", "messages": [GOOD] * PIECE}
    with mock.patch.object(
        ChatCompletionRequest, "__pydantic_validator__", wraps=ChatCompletionRequest.__pydantic_validator__
    ) as seen:
        asyncio.run(validated(ChatCompletionRequest, body))
    assert seen.validate_python.call_count == 1


def test_the_shortest_text_of_a_long_list_is_not_taken_for_a_short_body() -> None:
    # A list of PIECE + 1 one-byte items, as tightly as JSON writes it: one byte past SHORT_BYTES.
    text = "[" + ",".join(["1"] * (PIECE + 1)) + "]"
    assert len(text) == validated_body.SHORT_BYTES + 1
    body = {"model": "gpt-5.6-sol", "messages": [GOOD] * (PIECE + 1)}
    assert validated_body.validated_at_once(ChatCompletionRequest, body, len(text)) is None
    assert validated_body.validated_at_once(ChatCompletionRequest, {"model": "m", "messages": [GOOD]}, 40) is not None


@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    with MockServer(time_scale=0, presets=["openai", "claude-opus-4.8-fast"]) as running:
        yield running


def test_openai_sdk_gets_the_live_400_for_a_bad_message_far_down(server: MockServer) -> None:
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key=KEY, max_retries=0, _strict_response_validation=True)
    messages: list[Any] = with_faults(3 * PIECE, {2 * PIECE + 5: {"role": "robot", "content": "hi"}})
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="gpt-5.6-sol", messages=messages)
    error = caught.value.body
    assert isinstance(error, dict)
    assert error["param"] == f"messages[{2 * PIECE + 5}].role"
    assert error["code"] == "invalid_value" and "'robot'" in error["message"]


def test_openai_sdk_long_conversation_is_served_whole(server: MockServer) -> None:
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key=KEY, max_retries=0, _strict_response_validation=True)
    messages: list[Any] = [{"role": "user", "content": f"line {n}"} for n in range(3 * PIECE)]
    reply = client.chat.completions.create(model="gpt-5.6-sol", messages=messages, max_completion_tokens=4)
    assert reply.usage is not None  # every message reached the model and the count, not the first piece alone
    assert reply.usage.prompt_tokens == tokens.count_messages([PromptMessage("user", m["content"]) for m in messages])


def test_anthropic_sdk_gets_the_live_400_for_a_bad_message_far_down(server: MockServer) -> None:
    client = anthropic.Anthropic(base_url=server.url, api_key=KEY, max_retries=0, _strict_response_validation=True)
    messages: list[Any] = with_faults(3 * PIECE + 1, {2 * PIECE + 7: {"role": "user", "content": "hi", "extra": 1}})
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.create(model="claude-opus-4-8", max_tokens=8, messages=messages)
    assert caught.value.body == {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": f"messages.{2 * PIECE + 7}.extra: Extra inputs are not permitted",
        },
        "request_id": caught.value.request_id,
    }
