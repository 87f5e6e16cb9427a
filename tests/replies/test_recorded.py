"""A recording, paced: recorded offsets, re-paced at a tier, or at once (deadlines only, no clock runs)."""

from __future__ import annotations

import json

import pytest

from mockserver.cassettes.format import Event, Record, RecordedRequest, RecordedResponse
from mockserver.config.fixture import load_fixture
from mockserver.replies.recorded import plan_replay
from mockserver.service import access

START = 1000.0


def _chat(events: int = 10, tokens: int = 40, reasoning: int = 0) -> Record:
    chunk = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-5.6-sol",
             "service_tier": "default"}  # fmt: skip
    frames = [Event(ms=50, data=json.dumps({**chunk, "choices": [{"index": 0, "delta": {"role": "assistant"}}]}))]
    frames += [
        Event(ms=100 + 10 * k, data=json.dumps({**chunk, "choices": [{"index": 0, "delta": {"content": f"w{k} "}}]}))
        for k in range(events)
    ]
    usage = {"prompt_tokens": 7, "completion_tokens": tokens, "total_tokens": 7 + tokens,
             "completion_tokens_details": {"reasoning_tokens": reasoning}}  # fmt: skip
    frames += [Event(ms=200, data=json.dumps({**chunk, "choices": [], "usage": usage})), Event(ms=201, data="[DONE]")]
    return Record(
        version=1, id="rec_1", recorded_at="2026-12-01T15:00:00Z", api="chat.completions",
        request=RecordedRequest(method="POST", path="/v1/chat/completions", body={"model": "gpt-5.6-sol"}),
        response=RecordedResponse(status=200, headers={}, stream=True, headers_ms=40, duration_ms=202, events=frames),
    )  # fmt: skip


def _admission(tier: str | None) -> access.Admission:
    fixture = load_fixture()
    account = fixture.account("sk-mock-preview")
    assert account is not None
    return access.resolve(fixture, account, {}, "gpt-5.6-sol", tier, received_at=START)


def _plan(record: Record, tier: str | None, timing: str, *, stream: bool = True, scale: float = 1.0):  # type: ignore[no-untyped-def]
    return plan_replay(record, _admission(tier), start=START, stream=stream, include_usage=True, timing=timing,
                       time_scale=scale, chat_ultrafast_tier="priority")  # type: ignore[arg-type]  # fmt: skip


def test_recorded_timing_keeps_every_offset_stretched_by_the_time_scale() -> None:
    record = _chat()
    plan = _plan(record, None, "recorded", scale=2.0)
    assert [due - START for due, _ in plan.frames] == pytest.approx([2 * e.ms / 1000 for e in record.response.events])
    assert plan.schedule.end == pytest.approx(START + 2 * 0.202)


def test_tier_timing_paces_the_tokens_at_the_tier_asked_for() -> None:
    plan = _plan(_chat(events=10, tokens=40), "ultrafast", "tier")
    profile = load_fixture().profiles["ultrafast"]
    rate, ttft = profile.tokens_per_second, profile.ttft_ms / 1000
    dues = [due - START for due, _ in plan.frames]
    content = dues[1:11]
    # Four tokens an event: an event is due with its last token, token k at ttft + k / rate.
    assert content == pytest.approx([ttft + (4 * (j + 1) - 1) / rate for j in range(10)])
    assert dues[0] == 0.0 and dues[11:] == pytest.approx([ttft + 40 / rate] * 2)
    assert plan.schedule.end == pytest.approx(START + ttft + 40 / rate)
    # The reply names the tier served, as a generated Chat reply does for Ultrafast.
    assert all(b'"service_tier":"priority"' in frame for _, frame in plan.frames[:-1])


def test_reasoning_chat_does_not_stream_is_waited_for_before_the_first_event() -> None:
    plan = _plan(_chat(events=10, tokens=140, reasoning=100), "default", "tier")
    profile = load_fixture().profiles["default"]
    rate, ttft = profile.tokens_per_second, profile.ttft_ms / 1000
    first = plan.frames[1][0] - START
    assert first == pytest.approx(ttft + (100 + 4 - 1) / rate)


def test_instant_timing_sends_everything_at_once_and_the_body_is_folded() -> None:
    plan = _plan(_chat(), None, "instant", stream=False)
    assert {due for due, _ in plan.frames} == {START}
    body = plan.body()
    assert body["object"] == "chat.completion" and body["usage"]["completion_tokens"] == 40
    assert body["choices"][0]["message"]["content"] == "".join(f"w{k} " for k in range(10))


def test_a_shifted_replay_moves_its_frames_with_its_schedule() -> None:
    """A replay that waited for a capacity slot goes out later by the wait, every event alike."""
    plan = _plan(_chat(), None, "recorded")
    later = plan.shifted(0.75)
    assert [due for due, _ in later.frames] == pytest.approx([due + 0.75 for due, _ in plan.frames])
    assert [frame for _, frame in later.frames] == [frame for _, frame in plan.frames]
    assert later.schedule.end == pytest.approx(plan.schedule.end + 0.75)
