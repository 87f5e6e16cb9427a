"""A recording made without a stream, streamed: the events its API family frames, paced by each timing."""

from __future__ import annotations

import json

import pytest

from mockserver import errors
from mockserver.api.anthropic.replayed import stream_of_message
from mockserver.api.openai.responses.replayed import stream_of_response
from mockserver.cassettes.format import Record, RecordedRequest, RecordedResponse
from mockserver.config.fixture import load_fixture
from mockserver.replies.recorded import plan_replay
from mockserver.replies.recorded_shapes import BodyStream
from tests.replies.test_recorded import START, _admission

MESSAGE = {
    "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-opus-4-8",
    "content": [
        {"type": "thinking", "thinking": "The rivers carry salt to the sea.", "signature": "c2lnbmVk"},
        {"type": "text", "text": "Rivers wash minerals into it; evaporation leaves them.", "citations": None},
    ],
    "stop_reason": "end_turn", "stop_sequence": None,
    "usage": {"input_tokens": 12, "output_tokens": 30, "service_tier": "standard"},
}  # fmt: skip
RESPONSE = {
    "id": "resp_1", "object": "response", "created_at": 1, "status": "completed", "model": "gpt-5.6-sol",
    "output": [{"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather",
                "arguments": '{"city": "Paris, France"}', "status": "completed"}],
    "usage": {"input_tokens": 9, "output_tokens": 12, "total_tokens": 21}, "service_tier": "default",
}  # fmt: skip


def _record(api: str, path: str, body: dict[str, object], duration_ms: float = 1000) -> Record:
    return Record(
        version=1, id="rec_1", recorded_at="2026-12-01T15:00:00Z", api=api,
        request=RecordedRequest(method="POST", path=path, body={"model": body["model"]}),
        response=RecordedResponse(status=200, headers={}, stream=False, headers_ms=duration_ms,
                                  duration_ms=duration_ms, body=body),
    )  # fmt: skip


def _plan(record: Record, timing: str, family: BodyStream | None, tier: str | None = None):  # type: ignore[no-untyped-def]
    return plan_replay(record, _admission(tier), start=START, stream=True, include_usage=True, timing=timing,
                       time_scale=1.0, chat_ultrafast_tier="priority", family=family)  # type: ignore[arg-type]  # fmt: skip


def _kinds(plan) -> list[str]:  # type: ignore[no-untyped-def]
    return [frame.split(b"\n", 1)[0].removeprefix(b"event: ").decode() for _, frame in plan.frames]


def test_recorded_timing_spreads_the_deltas_over_the_recorded_duration() -> None:
    plan = _plan(_record("messages", "/v1/messages", MESSAGE), "recorded", stream_of_message)
    kinds, dues = _kinds(plan), [due - START for due, _ in plan.frames]
    deltas = [i for i, kind in enumerate(kinds) if kind == "content_block_delta"]
    assert kinds[:3] == ["message_start", "content_block_start", "ping"] and kinds[-2:] == [
        "message_delta",
        "message_stop",
    ]
    assert [dues[i] for i in deltas] == pytest.approx([(j + 1) / len(deltas) for j in range(len(deltas))])
    assert dues[: deltas[0]] == [0.0] * deltas[0] and dues[deltas[-1] :] == [1.0] * (len(dues) - deltas[-1])
    assert plan.schedule.end == pytest.approx(START + 1.0)
    text = "".join(
        json.loads(f.split(b"data: ")[1])["delta"].get("text", "") for _, f in plan.frames if b"text_delta" in f
    )
    assert text == MESSAGE["content"][1]["text"]  # type: ignore[index]


def test_tier_timing_paces_a_recorded_body_at_the_tier_asked_for() -> None:
    plan = _plan(
        _record("responses", "/v1/responses", RESPONSE, duration_ms=5000), "tier", stream_of_response, "ultrafast"
    )
    profile = load_fixture().profiles["ultrafast"]
    rate, ttft = profile.tokens_per_second, profile.ttft_ms / 1000
    dues = [due - START for due, _ in plan.frames]
    assert dues == sorted(dues) and dues[0] == 0.0
    assert ttft <= dues[_kinds(plan).index("response.function_call_arguments.delta")] < ttft + 12 / rate
    assert plan.schedule.end == pytest.approx(START + ttft + 12 / rate)
    assert b'"service_tier":"ultrafast"' in plan.frames[-1][1]


def test_instant_timing_sends_a_recorded_body_at_once() -> None:
    plan = _plan(_record("responses", "/v1/responses", RESPONSE), "instant", stream_of_response)
    assert {due for due, _ in plan.frames} == {START}
    assert _kinds(plan)[-1] == "response.completed"


def test_an_api_with_no_stream_of_its_own_is_refused_in_its_error_shape() -> None:
    with pytest.raises(errors.InvalidRequestError) as refused:
        _plan(_record("responses", "/v1/responses", RESPONSE), "instant", None)
    assert refused.value.code == "no_recording" and "record the exchange streamed" in str(refused.value)
