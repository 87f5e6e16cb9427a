"""The Anthropic Messages API, checked with the official ``anthropic`` SDK in strict mode.

Every streamed message is rebuilt by the SDK's own accumulator (``messages.stream`` ...
``get_final_message()``) and must equal the non-streamed reply of the same request: text,
tool use, thinking, stop sequences, cuts by ``max_tokens`` and usage.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import jsonschema
import pytest

from mockserver import MockServer
from tests.conftest import PREVIEW_KEY, STANDARD_KEY

PRESETS = ["openai", "claude-opus-4.8-fast", "claude-fable-5"]
OPUS = "claude-opus-4-8"
HELLO = [{"role": "user", "content": "Hello, Claude"}]
WEATHER = {
    "name": "get_weather",
    "description": "The current weather in a city.",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["city", "unit"],
        "additionalProperties": False,
    },
}


_CLIENTS: list[anthropic.Anthropic] = []


@pytest.fixture(scope="module")
def claude_server() -> Iterator[MockServer]:
    with MockServer(time_scale=0, seed=5, presets=PRESETS) as running:
        yield running
    while _CLIENTS:
        _CLIENTS.pop().close()


def sdk(server: MockServer, key: str = PREVIEW_KEY, **kwargs: Any) -> anthropic.Anthropic:
    """A strict client with no retries unless asked; closed when the module's server stops."""
    kwargs.setdefault("max_retries", 0)
    client = anthropic.Anthropic(base_url=server.url, api_key=key, _strict_response_validation=True, **kwargs)
    _CLIENTS.append(client)
    return client


@pytest.fixture
def client(claude_server: MockServer) -> anthropic.Anthropic:
    return sdk(claude_server)


def dump(message: Any) -> dict[str, Any]:
    """A message as plain data, without the stream helper's ``parsed_output`` extras and the ids
    (a message's and a tool call's id are new on every request)."""
    data: dict[str, Any] = message.to_dict()
    data.pop("id")
    for block in data["content"]:
        block.pop("parsed_output", None)
        if block["type"] == "tool_use":
            assert block.pop("id").startswith("toolu_01")
    return data


CASES: dict[str, dict[str, Any]] = {
    "text": {"messages": HELLO, "max_tokens": 400},
    "system prompt and fast mode": {"messages": HELLO, "max_tokens": 400, "system": "Be brief.", "speed": "fast"},
    "cut by max_tokens": {"messages": HELLO, "max_tokens": 5},
    "stop sequence": {"messages": HELLO, "max_tokens": 400, "stop_sequences": [".", "never"]},
    "chinese": {"messages": [{"role": "user", "content": "写一篇关于速度的短文"}], "max_tokens": 300},
    "thinking": {"messages": HELLO, "max_tokens": 1200, "thinking": {"type": "enabled", "budget_tokens": 1024}},
    "adaptive thinking": {"messages": HELLO, "max_tokens": 2000, "thinking": {"type": "adaptive"}},
    "tool use": {"messages": HELLO, "max_tokens": 400, "tools": [WEATHER], "tool_choice": {"type": "any"}},
    "thinking then tool use": {
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "max_tokens": 2000,
        "tools": [WEATHER],
        "thinking": {"type": "enabled", "budget_tokens": 1024},
    },
    "structured output": {
        "messages": HELLO,
        "max_tokens": 400,
        "output_config": {"format": {"type": "json_schema", "schema": WEATHER["input_schema"]}},
    },
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_stream_rebuilds_exactly_the_non_streamed_message(client: anthropic.Anthropic, case: str) -> None:
    params = {"model": OPUS, **CASES[case]}
    whole = client.messages.create(**params)
    with client.messages.stream(**params) as stream:
        events = [event.type for event in stream]
        final = stream.get_final_message()
    assert dump(final) == dump(whole)
    assert events[0] == "message_start" and events[-1] == "message_stop"
    assert whole.usage.output_tokens > 0 and whole.usage.input_tokens > 0
    with client.messages.stream(**params) as stream:
        text = "".join(stream.text_stream)
    assert text == "".join(b.text for b in whole.content if b.type == "text")


def test_a_text_message(client: anthropic.Anthropic) -> None:
    raw = client.messages.with_raw_response.create(model=OPUS, max_tokens=300, messages=HELLO)
    message = raw.parse()
    assert message.id.startswith("msg_01") and message.model == OPUS and message.role == "assistant"
    assert message.stop_reason == "end_turn" and message.stop_sequence is None
    assert [b.type for b in message.content] == ["text"] and message.content[0].text
    assert message.usage.service_tier == "standard" and message.usage.speed is None
    headers = raw.headers
    assert headers["request-id"].startswith("req_") and raw.request_id == headers["request-id"]
    for family in ("requests", "tokens", "input-tokens", "output-tokens"):
        for part in ("limit", "remaining", "reset"):
            assert f"anthropic-ratelimit-{family}-{part}" in headers
    assert headers["anthropic-ratelimit-requests-reset"].endswith("Z")
    assert "openai-version" not in headers and "x-ratelimit-limit-requests" not in headers


def test_stop_reasons(client: anthropic.Anthropic) -> None:
    cut = client.messages.create(model=OPUS, max_tokens=3, messages=HELLO)
    assert cut.stop_reason == "max_tokens" and cut.usage.output_tokens == 3
    stopped = client.messages.create(model=OPUS, max_tokens=400, messages=HELLO, stop_sequences=["."])
    assert stopped.stop_reason == "stop_sequence" and stopped.stop_sequence == "."
    assert "." not in stopped.content[0].text  # type: ignore[union-attr]
    warm = client.messages.create(model=OPUS, max_tokens=0, messages=HELLO)
    assert warm.content == [] and warm.stop_reason == "max_tokens" and warm.usage.output_tokens == 0


def test_a_tool_use_round_trip(client: anthropic.Anthropic) -> None:
    ask = [{"role": "user", "content": "What's the weather in Paris?"}]
    first = client.messages.create(model=OPUS, max_tokens=400, messages=ask, tools=[WEATHER])  # type: ignore[list-item]
    assert first.stop_reason == "tool_use"
    call = first.content[-1]
    assert call.type == "tool_use" and call.id.startswith("toolu_01") and call.name == "get_weather"
    jsonschema.validate(call.input, WEATHER["input_schema"])
    follow_up = [
        *ask,
        {"role": "assistant", "content": first.content},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "18 degrees, sunny"}]},
    ]
    answer = client.messages.create(model=OPUS, max_tokens=400, messages=follow_up, tools=[WEATHER])  # type: ignore[arg-type, list-item]
    assert answer.stop_reason == "end_turn" and [b.type for b in answer.content] == ["text"]
    with client.messages.stream(model=OPUS, max_tokens=400, messages=follow_up, tools=[WEATHER]) as stream:  # type: ignore[arg-type, list-item]
        assert dump(stream.get_final_message()) == dump(answer)


def test_a_named_tool_choice_calls_that_tool(client: anthropic.Anthropic) -> None:
    other = {**WEATHER, "name": "get_time", "input_schema": {"type": "object", "properties": {}}}
    message = client.messages.create(
        model=OPUS,
        max_tokens=400,
        messages=HELLO,
        tools=[WEATHER, other],  # type: ignore[list-item]
        tool_choice={"type": "tool", "name": "get_time"},
    )
    assert message.content[-1].type == "tool_use" and message.content[-1].name == "get_time"
    assert message.content[-1].input == {}


def test_thinking_comes_first_and_counts_as_output(client: anthropic.Anthropic) -> None:
    message = client.messages.create(
        model=OPUS, max_tokens=1100, messages=HELLO, thinking={"type": "enabled", "budget_tokens": 1024}
    )
    thinking, answer = message.content
    assert thinking.type == "thinking" and thinking.signature and thinking.thinking
    assert answer.type == "text"
    # The whole budget is thought, and max_tokens leaves the answer what is left.
    assert message.usage.output_tokens == 1100 and message.stop_reason == "max_tokens"


def test_count_tokens_matches_the_usage_of_the_same_request(client: anthropic.Anthropic) -> None:
    params: dict[str, Any] = {
        "model": OPUS,
        "system": [{"type": "text", "text": "You are terse."}],
        "messages": [
            {"role": "user", "content": "Weather?"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"}]},
        ],
        "tools": [WEATHER],
    }
    counted = client.messages.count_tokens(**params)
    message = client.messages.create(max_tokens=50, **params)
    assert counted.input_tokens == message.usage.input_tokens > 0


def test_models_in_anthropic_shape_with_anthropic_headers(
    client: anthropic.Anthropic, claude_server: MockServer
) -> None:
    models = client.models.list(limit=1)
    assert [m.id for m in models.data] and models.has_more
    listed = [m.id for m in client.models.list()]  # auto-pagination follows has_more / last_id
    assert sorted(listed) == ["claude-fable-5", OPUS]
    info = client.models.retrieve(OPUS)
    assert info.display_name == "Claude Opus 4.8" and info.max_tokens == 128000 and info.type == "model"
    with pytest.raises(anthropic.NotFoundError):
        client.models.retrieve("gpt-5.6-sol")
    openai_shape = httpx.get(f"{claude_server.base_url}/models", headers={"authorization": f"Bearer {PREVIEW_KEY}"})
    assert openai_shape.json()["object"] == "list"
    assert OPUS not in {m["id"] for m in openai_shape.json()["data"]}


# -- Errors and retries --------------------------------------------------------------------------


def _error(exc: anthropic.APIStatusError) -> dict[str, Any]:
    body = exc.body
    assert isinstance(body, dict) and body["type"] == "error" and set(body["error"]) == {"type", "message"}
    return body["error"]


def test_every_error_class(claude_server: MockServer) -> None:
    client = sdk(claude_server)
    cases: list[tuple[type[anthropic.APIStatusError], str, Any]] = [
        (anthropic.AuthenticationError, "authentication_error", lambda: sdk(claude_server, "sk-nope")),
        (anthropic.PermissionDeniedError, "permission_error", lambda: sdk(claude_server, "sk-mock-region-blocked")),
    ]
    for kind, error_type, make in cases:
        with pytest.raises(kind) as caught:
            make().messages.create(model=OPUS, max_tokens=10, messages=HELLO)
        assert _error(caught.value)["type"] == error_type
    with pytest.raises(anthropic.NotFoundError) as missing:
        client.messages.create(model="claude-nope", max_tokens=10, messages=HELLO)
    assert _error(missing.value) == {"type": "not_found_error", "message": "model: claude-nope"}
    with pytest.raises(anthropic.BadRequestError) as bad:
        client.messages.create(
            model=OPUS, max_tokens=10, messages=HELLO, thinking={"type": "enabled", "budget_tokens": 5}
        )
    assert _error(bad.value)["message"].startswith("thinking.enabled.budget_tokens: Input should be greater")
    faults = {
        "status=402": (anthropic.PaymentRequiredError, "billing_error"),
        "status=408": (anthropic.RequestTimeoutError, "timeout_error"),
        "status=409": (anthropic.ConflictError, "conflict_error"),
        "status=413": (anthropic.ContentTooLargeError, "request_too_large"),
        "status=422": (anthropic.UnprocessableEntityError, "invalid_request_error"),
        "status=429": (anthropic.RateLimitError, "rate_limit_error"),
        "status=500": (anthropic.InternalServerError, "api_error"),
        "status=529": (anthropic.OverloadedError, "overloaded_error"),
        "status=503": (anthropic.ServiceUnavailableError, "overloaded_error"),
        "status=504": (anthropic.GatewayTimeoutError, "timeout_error"),
    }
    for fault, (kind, error_type) in faults.items():
        with pytest.raises(kind) as caught:
            client.messages.create(model=OPUS, max_tokens=10, messages=HELLO, extra_headers={"x-mock-fault": fault})
        assert _error(caught.value)["type"] == error_type
        assert caught.value.request_id is not None
    with pytest.raises(anthropic.RateLimitError) as limited:
        client.messages.create(model=OPUS, max_tokens=10, messages=HELLO, extra_headers={"x-mock-fault": "status=429"})
    assert limited.value.response.headers["retry-after"] == "1"


def test_a_mid_stream_error_event_raises(client: anthropic.Anthropic) -> None:
    fault = {"x-mock-fault": "error_event_after=3;code=server_is_overloaded"}
    with (
        pytest.raises(anthropic.APIStatusError) as caught,
        client.messages.stream(model=OPUS, max_tokens=100, messages=HELLO, extra_headers=fault) as stream,
    ):
        for _ in stream:
            pass
    assert _error(caught.value) == {"type": "overloaded_error", "message": "Overloaded"}


@pytest.mark.parametrize(
    ("fault", "retried"),
    [("once status=429", True), ("once status=529", True), ("once status=500", True), ("once status=400", False)],
)
def test_retry_behaviour(claude_server: MockServer, fault: str, retried: bool) -> None:
    client = sdk(claude_server, max_retries=2)
    test_id = f"retry-{fault}"
    headers = {"x-mock-fault": fault, "x-mock-test-id": test_id}
    if retried:
        message = client.messages.create(model=OPUS, max_tokens=10, messages=HELLO, extra_headers=headers)
        assert message.stop_reason in ("end_turn", "max_tokens")
    else:
        with pytest.raises(anthropic.BadRequestError):
            client.messages.create(model=OPUS, max_tokens=10, messages=HELLO, extra_headers=headers)
    attempts = claude_server.calls(test_id)
    assert len(attempts) == (2 if retried else 1)


def test_a_spent_balance_is_a_400_that_is_not_retried(claude_server: MockServer) -> None:
    client = sdk(claude_server, "sk-mock-tiny-quota", max_retries=2)
    with pytest.raises(anthropic.BadRequestError) as caught:
        for _ in range(50):
            client.messages.create(model=OPUS, max_tokens=400, messages=HELLO)
    assert "credit balance is too low" in _error(caught.value)["message"]


def test_the_rate_limit_window_answers_429_with_retry_after(claude_server: MockServer) -> None:
    client = sdk(claude_server, "sk-mock-low-limits")
    claude_server.reset()
    for _ in range(3):
        client.messages.create(model="claude-fable-5", max_tokens=5, messages=HELLO)
    with pytest.raises(anthropic.RateLimitError) as caught:
        client.messages.create(model="claude-fable-5", max_tokens=5, messages=HELLO)
    headers = caught.value.response.headers
    assert headers["anthropic-ratelimit-requests-remaining"] == "0" and int(headers["retry-after"]) >= 1
    assert "requests per min" in _error(caught.value)["message"]
    claude_server.reset()


def test_headers_and_bodies_below_the_sdk(claude_server: MockServer) -> None:
    url = f"{claude_server.url}/v1/messages"
    body = {"model": OPUS, "max_tokens": 10, "messages": HELLO}
    no_key = httpx.post(url, json=body, headers={"anthropic-version": "2023-06-01"})
    assert no_key.status_code == 401
    assert no_key.json()["error"] == {"type": "authentication_error", "message": "x-api-key header is required"}
    no_version = httpx.post(url, json=body, headers={"x-api-key": PREVIEW_KEY})
    assert no_version.status_code == 400 and no_version.json()["error"]["message"].startswith("anthropic-version")
    bearer = httpx.post(
        url, json=body, headers={"authorization": f"Bearer {STANDARD_KEY}", "anthropic-version": "2023-06-01"}
    )
    assert bearer.status_code == 200
    headers = {"x-api-key": PREVIEW_KEY, "anthropic-version": "2023-06-01"}
    missing = httpx.post(url, json={"model": OPUS, "messages": HELLO}, headers=headers)
    assert missing.status_code == 400 and missing.json()["error"]["message"] == "max_tokens: Field required"
    extra = httpx.post(url, json={**body, "bogus": 1}, headers=headers)
    assert extra.json()["error"]["message"] == "bogus: Extra inputs are not permitted"
    not_json = httpx.post(url, content=b"{", headers=headers)
    assert not_json.status_code == 400 and not_json.json()["type"] == "error"
    orphan = httpx.post(
        url,
        json={**body, "messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x"}]}]},
        headers=headers,
    )
    assert orphan.status_code == 400 and "unexpected `tool_use_id`" in orphan.json()["error"]["message"]
    unanswered = httpx.post(
        url,
        json={
            **body,
            "messages": [
                *HELLO,
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
                {"role": "user", "content": "and?"},
            ],
        },
        headers=headers,
    )
    assert "without `tool_result` blocks" in unanswered.json()["error"]["message"]
    fable_fast = httpx.post(url, json={**body, "model": "claude-fable-5", "speed": "fast"}, headers=headers)
    assert fable_fast.status_code == 400 and "fast mode" in fable_fast.json()["error"]["message"]
    openai_model = httpx.post(url, json={**body, "model": "gpt-5.6-sol"}, headers=headers)
    assert openai_model.status_code == 404 and openai_model.json()["error"]["message"] == "model: gpt-5.6-sol"
    unknown = httpx.get(f"{claude_server.url}/v1/messages/nope", headers=headers)
    assert unknown.status_code in (404, 405) and unknown.json()["type"] == "error"


def test_journal_ledger_and_scripts_serve_the_anthropic_api_too(claude_server: MockServer) -> None:
    claude_server.reset()
    client = sdk(claude_server)
    client.messages.create(model=OPUS, max_tokens=50, messages=HELLO, speed="fast")
    call = claude_server.requests.last
    assert call.path == "/v1/messages" and call.status == 200
    usage = httpx.get(f"{claude_server.url}/_mock/usage").json()
    rows = [r for r in usage["rows"] if r["model"] == OPUS]
    assert rows and rows[0]["tier"] == "priority" and rows[0]["cost_usd"] > 0
    call = {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}]}
    claude_server.configure(scripts={"(?i)ping": "pong", "(?i)weather": call, "(?i)fail": {"error": "status=529"}})
    try:
        pong = client.messages.create(model=OPUS, max_tokens=50, messages=[{"role": "user", "content": "ping"}])
        assert pong.content[0].text == "pong"  # type: ignore[union-attr]
        ask = [{"role": "user", "content": "weather?"}]
        scripted = client.messages.create(model=OPUS, max_tokens=50, messages=ask, tools=[WEATHER])  # type: ignore[list-item]
        assert scripted.content[0].type == "tool_use" and scripted.stop_reason == "tool_use"
        assert scripted.content[0].input == {"city": "Paris", "unit": "celsius"}
        with pytest.raises(anthropic.OverloadedError):
            client.messages.create(model=OPUS, max_tokens=50, messages=[{"role": "user", "content": "fail"}])
    finally:
        claude_server.reset()


def test_the_async_client_streams_the_same_message(claude_server: MockServer) -> None:
    params: dict[str, Any] = {"model": OPUS, "max_tokens": 300, "messages": HELLO, "tools": [WEATHER]}

    async def both() -> tuple[Any, Any]:
        async with anthropic.AsyncAnthropic(
            base_url=claude_server.url, api_key=PREVIEW_KEY, _strict_response_validation=True, max_retries=0
        ) as client:
            whole = await client.messages.create(**params)
            async with client.messages.stream(**params) as stream:
                return whole, await stream.get_final_message()

    whole, final = asyncio.run(both())
    assert dump(final) == dump(whole)
