"""Fault syntax and stream framing: the framing is checked against synthetic events without a
server, and once on the raw stream of a real ``/v1/responses``."""

from __future__ import annotations

import asyncio
import math

import httpx
import orjson
import pytest
from pydantic import ValidationError

from mockserver.config.faults import MAX_DURATION_MS, MAX_RETRY_AFTER_S, FaultSpec, parse_fault
from mockserver.engine.dialects import CHAT, RESPONSES
from mockserver.engine.pacing import FakeClock, Schedule
from mockserver.engine.streaming import DONE, data_event, typed_event
from mockserver.errors.variants import ErrorContext, status_error
from mockserver.harness.faults.midstream import FaultPacer, with_fault
from mockserver.testing.handle import MockServerHandle
from tests.support import scheduled


def test_parse_fault_syntax() -> None:
    assert parse_fault("once status=503") == {"times": 1, "status": "503"}
    assert parse_fault(" stall_ms=20 ; at=mid ") == {"stall_ms": "20", "at": "mid"}
    spec = FaultSpec.model_validate("once status=429;code=insufficient_quota;retry=false")
    assert (spec.status, spec.code, spec.retry, spec.times) == (429, "insufficient_quota", False, 1)
    assert spec.describe() == "status=429;code=insufficient_quota;retry=false;times=1"
    assert FaultSpec.model_validate("stall;at=3").stall_after == 3
    assert FaultSpec.model_validate("truncate=0").truncate == 0
    with pytest.raises(ValidationError, match="choose one of"):
        FaultSpec.model_validate("truncate;drop_after=1")


@pytest.mark.parametrize(
    "spec",
    [
        "status=429;retry_after=1e308",
        "status=429;retry_after=inf",
        "status=429;retry_after=nan",
        "status=429;retry_after=-1",
        "stall_ms=1e309",
        "stall_ms=nan",
        "ttft_ms=1e309",
        "ttft_ms=3600001",
        "drop_after=1000001",
        "error_event_after=1000001",
        "truncate=1000001",
        "stall;at=1000001",
    ],
)
def test_durations_and_counts_must_be_finite_and_bounded(spec: str) -> None:
    with pytest.raises(ValidationError):
        FaultSpec.model_validate(spec)


def test_the_bounds_themselves_are_accepted() -> None:
    assert FaultSpec.model_validate(f"status=429;retry_after={MAX_RETRY_AFTER_S:g}").retry_after == MAX_RETRY_AFTER_S
    assert FaultSpec.model_validate(f"stall_ms={MAX_DURATION_MS:.0f}").stall_ms == MAX_DURATION_MS
    assert FaultSpec.model_validate(f"ttft_ms={MAX_DURATION_MS:.0f}").ttft_ms == MAX_DURATION_MS


@pytest.mark.parametrize(
    ("status", "code", "retry_after", "wait"),
    [
        (429, None, 30.0, "30s"),
        (429, "tokens", 1.5, "1.5s"),
        (429, "capacity", 90.0, "1m30s"),
        (503, "capacity", 3600.0, "1h0m0s"),
        (429, None, None, "1s"),
    ],
)
def test_the_body_says_to_wait_as_long_as_the_retry_headers(
    status: int, code: str | None, retry_after: float | None, wait: str
) -> None:
    error = status_error(status, ErrorContext(), code=code, retry_after=retry_after)
    assert f"Please try again in {wait}" in error.message
    seconds = float(error.headers["retry-after-ms"]) / 1000
    assert seconds == (retry_after if retry_after is not None else 1.0)
    assert error.headers["retry-after"] == str(math.ceil(seconds))


def test_the_default_wait_follows_the_time_scale() -> None:
    error = status_error(429, ErrorContext(), time_scale=0)
    assert error.headers["retry-after-ms"] == "1"
    assert "Please try again in 1ms." in error.message


def _responses_events() -> list[bytes]:
    kinds = ["response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"]
    kinds += ["response.output_text.delta"] * 4
    kinds += ["response.output_text.done", "response.content_part.done", "response.output_item.done"]
    kinds += ["response.completed"]
    return [typed_event({"type": kind, "sequence_number": n}) for n, kind in enumerate(kinds)]


def _chat_events() -> list[bytes]:
    envelope = {"id": "chatcmpl-x", "object": "chat.completion.chunk"}
    first = data_event({**envelope, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]})
    tokens = [data_event({**envelope, "choices": [{"index": 0, "delta": {"content": w}}]}) for w in "abcd"]
    finish = data_event({**envelope, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return [first, *tokens, finish, DONE]


def _run(events: list[bytes], spec: str, *, responses: bool) -> list[bytes]:
    async def collect() -> list[bytes]:
        pacer = FaultPacer(FakeClock(), Schedule.build(start=0, ttft=0, tokens_per_second=10, total_tokens=4))
        dialect = RESPONSES if responses else CHAT
        wrapped = with_fault(iter(events), FaultSpec.model_validate(spec), dialect=dialect, pacer=pacer)
        return [event for _, event in await scheduled(wrapped, pacer.clock, dialect)]

    return asyncio.run(collect())


def test_event_classification() -> None:
    chat, responses = _chat_events(), _responses_events()
    assert [CHAT.is_token_event(e) for e in chat] == [False, True, True, True, True, False, False]
    assert sum(RESPONSES.is_token_event(e) for e in responses) == 4
    assert [RESPONSES.is_terminal_event(e) for e in responses][-1] and not RESPONSES.is_terminal_event(responses[-2])
    assert CHAT.is_terminal_event(DONE)


def test_responses_error_event_is_flat_with_the_next_sequence_number() -> None:
    out = _run(_responses_events(), "error_event_after=2", responses=True)
    last = out[-1]
    assert last.startswith(b"event: error\ndata: ")
    payload = orjson.loads(last.split(b"data: ", 1)[1])
    assert payload == {
        "type": "error",
        "sequence_number": 6,
        "code": "server_error",
        "message": "The server had an error while processing your request. Sorry about that!",
        "param": None,
    }
    assert len(out) == 7  # 4 opening events + 2 deltas + the error


def test_responses_nested_error_event_carries_an_error_object() -> None:
    payload = orjson.loads(RESPONSES.fault_event("too_many_requests", 3, "nested").split(b"data: ", 1)[1])
    assert payload["error"]["code"] == "too_many_requests" and payload["sequence_number"] == 3


def test_chat_error_event_is_a_data_only_error_object() -> None:
    out = _run(_chat_events(), "error_event_after=1", responses=False)
    assert out[-1].startswith(b'data: {"error":{"message":')
    assert len(out) == 3


def test_truncate_drops_only_the_terminal_event() -> None:
    assert _run(_responses_events(), "truncate", responses=True) == _responses_events()[:-1]
    assert _run(_chat_events(), "truncate", responses=False) == _chat_events()[:-1]


def test_a_fault_whose_n_is_never_reached_fires_at_the_terminal_event() -> None:
    out = _run(_responses_events(), "error_event_after=50", responses=True)
    assert out[:-1] == _responses_events()[:-1] and out[-1].startswith(b"event: error")
    with pytest.raises(ConnectionAbortedError):
        _run(_chat_events(), "drop_after=9", responses=False)


def test_responses_route_framing_at_the_raw_sse_level(mockserver: MockServerHandle) -> None:
    body = {"model": "gpt-5.6-sol", "input": "hello", "stream": True}
    headers = {"authorization": "Bearer sk-mock-preview", "x-mock-fault": "error_event_after=2", **mockserver.headers}
    reply = httpx.post(f"{mockserver.base_url}/responses", json=body, headers=headers)
    assert reply.status_code == 200, reply.text
    events = [e for e in reply.text.split("\n\n") if e]
    assert events[-1].startswith("event: error\ndata: ")
    assert orjson.loads(events[-1].split("data: ", 1)[1])["type"] == "error"
