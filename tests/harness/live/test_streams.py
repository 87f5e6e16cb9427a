"""The streams view reads how far each stream has got from the scheduler's own state, on a fake clock."""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

from mockserver.engine.pacing import Schedule
from mockserver.harness.live import streams
from mockserver.harness.live.streams import LiveStreams, progress
from mockserver.service.exchange import Exchange

SCHEDULE = Schedule.build(start=100.0, ttft=1.0, tokens_per_second=100.0, total_tokens=500)


def playing(due: float, **state: Any) -> Any:
    """What the scheduler keeps of a stream: its next deadline, and whether it is blocked or ending."""
    fields = {"due": due, "ending": False, "over": False, "blocked": False, "source": object()}
    engine = {"run": None, "at": 0, "pending": math.inf, "shift": 0.0, "anchored": True}  # see catch_up
    return SimpleNamespace(**{**fields, **engine, **state})


def exchange(**headers: str) -> Exchange:
    return Exchange("req_1", "POST", "/v1/chat/completions", headers, started_at=100.0, model="m", tier="priority")


def test_tokens_sent_are_those_due_before_the_next_unwritten_frame() -> None:
    assert progress(SCHEDULE, playing(SCHEDULE.due_at(0)), now=101.0) == (0, 0.0)
    assert progress(SCHEDULE, playing(SCHEDULE.due_at(250)), now=SCHEDULE.due_at(250)) == (250, 0.0)


def test_a_stream_behind_its_schedule_shows_how_late_it_is() -> None:
    sent, late = progress(SCHEDULE, playing(SCHEDULE.due_at(100)), now=SCHEDULE.due_at(100) + 0.25)
    assert sent == 100
    assert abs(late - 0.25) < 1e-9


def test_a_late_first_token_moves_the_schedule_and_is_shown() -> None:
    shift = 0.5  # the first token went out half a second late: every deadline moved by as much
    stream = playing(SCHEDULE.due_at(100) + shift, shift=shift)
    assert progress(SCHEDULE, stream, now=SCHEDULE.due_at(100) + shift) == (100, 0.0)
    live = LiveStreams()
    ex = exchange()
    live.add(ex, SCHEDULE, stream.source)
    (row,) = live.rows(now=SCHEDULE.due_at(100) + shift, active=[stream], known_keys=[])
    assert row["first_token_late_ms"] == 500.0 and row["late_ms"] == 0.0


def test_the_next_deadline_of_a_run_is_read_from_the_run() -> None:
    run = SimpleNamespace(dues=[SCHEDULE.due_at(k) for k in range(300, 340)])
    stream = playing(0.0, run=run, at=10)
    assert progress(SCHEDULE, stream, now=SCHEDULE.due_at(310)) == (310, 0.0)


def test_a_stream_whose_client_is_not_reading_is_not_the_servers_lateness() -> None:
    assert progress(SCHEDULE, playing(SCHEDULE.due_at(100), blocked=True), now=110.0) == (100, 0.0)


def test_a_stream_past_its_last_token_has_sent_them_all() -> None:
    assert progress(SCHEDULE, playing(SCHEDULE.end), now=SCHEDULE.end) == (500, 0.0)
    assert progress(SCHEDULE, playing(0.0, ending=True), now=200.0) == (500, 0.0)


def test_a_row_has_the_achieved_rate_ttft_and_masked_key() -> None:
    live = LiveStreams()
    ex = exchange(authorization="Bearer sk-mock-preview", **{"x-mock-test-id": "t-1"})
    ex.first_token_at = 101.0
    stream = playing(SCHEDULE.due_at(201))
    live.add(ex, SCHEDULE, stream.source)
    (row,) = live.rows(now=SCHEDULE.due_at(200) + 0.001, active=[stream], known_keys=["sk-mock-preview"])
    assert row["tokens_sent"] == 201 and row["tokens_planned"] == 500
    assert row["target_rate"] == 100.0
    assert abs(row["achieved_rate"] - 100.0) < 0.2
    assert row["ttft_ms"] == 1000.0
    assert row["key"] != "sk-mock-preview" and row["key"].startswith("sk-moc")
    assert row["test_id"] == "t-1" and row["tier"] == "priority"


def test_streams_not_played_are_not_listed_and_finished_ones_are_swept() -> None:
    live = LiveStreams()
    finished = [exchange() for _ in range(streams.SWEEP_FLOOR + 10)]
    for ex in finished:
        ex.finished_at = 120.0
        live.add(ex, SCHEDULE, object())
    assert len(live) <= streams.SWEEP_FLOOR  # swept as it grew, with no dashboard reading
    assert live.rows(now=101.0, active=[], known_keys=[]) == []
    assert len(live) == 0


def test_a_stream_whose_reply_ended_is_dropped_at_once() -> None:
    live = LiveStreams()
    ended, playing_on = exchange(), exchange()
    live.add(ended, SCHEDULE, object())
    live.add(playing_on, SCHEDULE, object())
    live.discard(ended)
    live.discard(ended)  # a second end (or one never added) changes nothing
    assert len(live) == 1
