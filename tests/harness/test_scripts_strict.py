"""``scripts_strict``: a request that no script rule answers is a clear 400, not a generated reply."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from mockserver.config.fixture import parse_fixture
from mockserver.testing.handle import MockServerHandle
from tests.conftest import fixture_with

RULES: list[dict[str, Any]] = [
    {"name": "ping", "match": {"message": "(?i)^ping$"}, "reply": {"text": "pong"}},
    {"match": {"model": "gpt-5.6-mini"}, "reply": {"text": "mini"}},
]


def client(mockserver: MockServerHandle) -> openai.OpenAI:
    return mockserver.client(strict=True, max_retries=0)


def test_a_matched_request_is_answered_and_an_unmatched_one_refused(mockserver: MockServerHandle) -> None:
    mockserver.configure(scripts=RULES, scripts_strict=True)
    sdk = client(mockserver)
    reply = sdk.chat.completions.create(model="gpt-5.6-sol", messages=[{"role": "user", "content": "ping"}])
    assert reply.choices[0].message.content == "pong"
    with pytest.raises(openai.BadRequestError) as refused:
        sdk.chat.completions.create(model="gpt-5.6-sol", messages=[{"role": "user", "content": "Hello there"}])
    error = refused.value.body
    assert isinstance(error, dict) and error["code"] == "unscripted_request"
    message = error["message"]
    assert "POST /v1/chat/completions" in message and "model=gpt-5.6-sol" in message
    assert "'Hello there'" in message
    assert "#0 'ping': message '(?i)^ping$' does not match" in message
    assert "#1: model is 'gpt-5.6-mini'" in message
    assert mockserver.requests.last.status == 400


def test_the_responses_api_is_strict_too(mockserver: MockServerHandle) -> None:
    mockserver.configure(scripts=RULES, scripts_strict=True)
    sdk = client(mockserver)
    assert sdk.responses.create(model="gpt-5.6-sol", input="ping").output_text == "pong"
    with pytest.raises(openai.BadRequestError, match="POST /v1/responses"):
        sdk.responses.create(model="gpt-5.6-sol", input="What now?")


def test_strict_without_rules_refuses_everything(mockserver: MockServerHandle) -> None:
    mockserver.configure(scripts_strict=True)
    with pytest.raises(openai.BadRequestError, match="there are no rules"):
        client(mockserver).chat.completions.create(model="gpt-5.6-sol", messages=[{"role": "user", "content": "hi"}])


def test_a_used_up_sequence_says_so(mockserver: MockServerHandle) -> None:
    rule = {"name": "twice", "reply": {"sequence": [{"text": "one"}], "then": "generate"}}
    mockserver.configure(scripts=[rule], scripts_strict=True)
    sdk = client(mockserver)
    assert sdk.chat.completions.create(model="gpt-5.6-sol", messages=[{"role": "user", "content": "a"}])
    with pytest.raises(openai.BadRequestError, match=r"#0 'twice': its sequence is used up"):
        sdk.chat.completions.create(model="gpt-5.6-sol", messages=[{"role": "user", "content": "a"}])


@pytest.mark.mockserver(scripts={"(?i)weather": "Sunny."}, scripts_strict=True)
def test_the_marker_turns_it_on(mockserver: MockServerHandle) -> None:
    sdk = client(mockserver)
    assert (
        sdk.chat.completions.create(model="gpt-5.6-sol", messages=[{"role": "user", "content": "weather?"}])
        .choices[0]
        .message.content
        == "Sunny."
    )
    with pytest.raises(openai.BadRequestError):
        sdk.chat.completions.create(model="gpt-5.6-sol", messages=[{"role": "user", "content": "news?"}])


def test_off_by_default_and_a_fixture_field() -> None:
    assert fixture_with().scripts_strict is False
    data = fixture_with().model_dump()
    data["scripts_strict"] = True
    assert parse_fixture(data).scripts_strict is True
