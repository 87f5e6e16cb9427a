"""Each API family's dialect: its token and terminal events, the error events ending a stream, its error replies."""

from __future__ import annotations

import orjson
import pytest

from mockserver import errors
from mockserver.engine.dialects import ANTHROPIC, CHAT, RESPONSES, Dialect
from mockserver.engine.stopping import SHUTDOWN_CODE, TIME_LIMIT_CODE
from mockserver.engine.streaming import DONE, data_event, typed_event


def payload(event: bytes) -> dict[str, object]:
    parsed: dict[str, object] = orjson.loads(event.split(b"data: ", 1)[1])
    return parsed


def test_token_and_terminal_events_are_told_apart_per_family() -> None:
    chunk = data_event({"choices": [{"index": 0, "delta": {"content": "hi"}}]})
    assert CHAT.is_token_event(chunk) and not CHAT.is_terminal_event(chunk) and CHAT.is_terminal_event(DONE)
    delta = typed_event({"type": "response.output_text.delta", "delta": "hi"})
    done = typed_event({"type": "response.completed"})
    assert RESPONSES.is_token_event(delta) and RESPONSES.is_terminal_event(done) and not RESPONSES.is_token_event(done)
    block = typed_event({"type": "content_block_delta", "delta": {"type": "text_delta", "text": "hi"}})
    stop = typed_event({"type": "message_stop"})
    assert ANTHROPIC.is_token_event(block) and ANTHROPIC.is_terminal_event(stop)
    assert not ANTHROPIC.is_token_event(chunk) and not CHAT.is_token_event(block)


@pytest.mark.parametrize("dialect", [CHAT, RESPONSES, ANTHROPIC], ids=lambda d: d.name)
def test_the_server_ends_a_stream_with_an_error_event_in_its_family_s_shape(dialect: Dialect) -> None:
    for event, code in ((dialect.shutdown_event(4), SHUTDOWN_CODE), (dialect.time_limit_event(4, 30), TIME_LIMIT_CODE)):
        body = payload(event)
        assert event.startswith(b"event: error\n") == dialect.typed
        if dialect is CHAT:
            assert body["error"] == {**body["error"], "type": "server_error", "code": code}  # type: ignore[dict-item]
        elif dialect is RESPONSES:
            assert (body["type"], body["code"], body["sequence_number"]) == ("error", code, 4)
        else:
            assert body == {"type": "error", "error": {"type": "overloaded_error", "message": body["error"]["message"]}}  # type: ignore[index]
    assert b"server_reset" in dialect.reset_event(0) or dialect is ANTHROPIC


def test_a_fault_s_error_event_speaks_its_family_s_words() -> None:
    assert payload(CHAT.fault_event("too_many_requests", 2))["error"] == {
        "message": "Too Many Requests",
        "type": "too_many_requests",
        "param": None,
        "code": "too_many_requests",
    }
    nested = payload(RESPONSES.fault_event("server_is_overloaded", 7, "nested"))
    assert nested["sequence_number"] == 7 and nested["error"]["type"] == "service_unavailable_error"  # type: ignore[index]
    assert payload(ANTHROPIC.fault_event("overloaded", 0)) == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }
    assert payload(ANTHROPIC.fault_event("no_such_code", 0))["error"]["type"] == "api_error"  # type: ignore[index]


@pytest.mark.parametrize("dialect", [CHAT, RESPONSES], ids=lambda d: d.name)
def test_openai_dialects_answer_an_error_in_openai_shape(dialect: Dialect) -> None:
    error = errors.RateLimitError("Rate limit reached.", code="rate_limit_exceeded", param="requests")
    assert dialect.error_status(error) == 429
    assert dialect.error_body(error, "req_1") == {
        "error": {
            "message": "Rate limit reached.",
            "type": "requests",
            "param": "requests",
            "code": "rate_limit_exceeded",
        }
    }


def test_the_anthropic_dialect_answers_an_error_in_anthropic_shape_and_words() -> None:
    missing = errors.NotFoundError("The model `gpt-9` does not exist.", code="model_not_found")
    assert ANTHROPIC.error_status(missing) == 404
    assert ANTHROPIC.error_body(missing, "req_1") == {
        "type": "error",
        "error": {"type": "not_found_error", "message": "model: gpt-9"},
        "request_id": "req_1",
    }
    spent = errors.MockAPIError("You exceeded your current quota.", code="insufficient_quota")
    spent.status_code = 429
    assert ANTHROPIC.error_status(spent) == 400  # a spent balance is a 400 at Anthropic, which no SDK retries
    assert ANTHROPIC.error_body(spent, "req_2")["error"]["type"] == "invalid_request_error"
