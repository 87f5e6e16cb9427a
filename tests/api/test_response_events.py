"""Pacing of the Responses stream on a fake clock: reasoning comes first, at the tier's rate."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from mockserver.api.openai.responses.event_stream import event_items
from mockserver.api.openai.responses.lifecycle import plan_response
from mockserver.api.openai.schemas import ResponseCreateRequest
from mockserver.config.fixture import load_fixture
from mockserver.config.settings import Settings
from mockserver.engine.dialects import RESPONSES
from mockserver.engine.pacing import FakeClock, Pacer
from mockserver.server_state import ServerState
from mockserver.service import access
from tests.support import scheduled

HEADERS = {"authorization": "Bearer sk-mock-preview", "x-mock-output-tokens": "50"}


def timed_events(body: dict[str, Any]) -> tuple[list[tuple[float, dict[str, Any]]], Any]:
    clock = FakeClock(start=0.0)
    state = ServerState(settings=Settings(time_scale=1.0), fixture=load_fixture(), clock=clock)
    request = ResponseCreateRequest.model_validate({"model": "gpt-5.6-sol-ultrafast", **body})
    admission = asyncio.run(access.admission(state.fixture, state.fixture.accounts[0], HEADERS, request.model, None))
    plan = plan_response(state, admission, request, body)

    played = asyncio.run(scheduled(event_items(plan, Pacer(clock, plan.schedule), per_chunk=1), clock, RESPONSES))
    return [(at, json.loads(raw.decode().split("data: ", 1)[1])) for at, raw in played], plan


def test_reasoning_delays_the_first_text_delta_by_its_tokens() -> None:
    events, plan = timed_events({"input": "Hi", "reasoning": {"effort": "medium", "summary": "auto"}})
    schedule = plan.schedule
    first_text = next(t for t, e in events if e["type"] == "response.output_text.delta")
    first_summary = next(t for t, e in events if e["type"] == "response.reasoning_summary_text.delta")
    assert events[0][0] == 0.0  # response.created goes out at once
    assert first_summary == schedule.due_at(256 - 48)  # the summary is the last 48 of 256 reasoning tokens
    assert first_text == schedule.due_at(256)
    assert abs(first_text - (0.2 + 256 / 750)) < 2 / 750  # ttft + reasoning at 750 tok/s, within jitter
    assert events[-1][0] == schedule.end and events[-1][1]["type"] == "response.completed"
    assert plan.schedule.total_tokens == 256 + 50 == events[-1][1]["response"]["usage"]["output_tokens"]


def test_text_deltas_follow_the_deadlines() -> None:
    events, plan = timed_events({"input": "Hi"})
    times = [t for t, e in events if e["type"] == "response.output_text.delta"]
    assert len(times) == 50
    assert times == [plan.schedule.due_at(k) for k in range(50)]
