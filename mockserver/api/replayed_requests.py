"""A request a recording answers (:mod:`mockserver.api.replaying`): admitted as the request itself, planned
from the record. Loaded with the first request replayed: a server that replays nothing never needs it.
"""

from __future__ import annotations

from typing import Any

from mockserver.api.family import Asked
from mockserver.api.serving import Reply
from mockserver.cassettes.format import Record
from mockserver.replies.recorded import ReplayPlan, plan_replay
from mockserver.replies.recorded_shapes import BodyStream
from mockserver.service.access import Admission


class Replayed(Asked[ReplayPlan]):
    """A request a recording answers: admitted as the request itself, planned from the record."""

    caches_prompt = False

    __slots__ = ("family", "record")

    def __init__(self, asked: Asked[Any], record: Record, family: BodyStream | None) -> None:
        super().__init__(
            asked.state,
            asked.exchange,
            asked.account,
            asked.raw,
            model=asked.model,
            service_tier=asked.service_tier,
            stream=asked.stream,
        )
        self.record = record
        self.family = family

    def plan(self, admission: Admission) -> ReplayPlan:
        state, raw = self.state, self.raw
        fixture = state.fixture
        options = raw.get("stream_options") if isinstance(raw, dict) else None
        return plan_replay(
            self.record,
            admission,
            start=admission.start_time(state.clock),
            stream=self.stream,
            include_usage=bool(options.get("include_usage")) if isinstance(options, dict) else False,
            timing=fixture.replay_timing,
            time_scale=state.settings.time_scale,
            chat_ultrafast_tier=fixture.policies.chat_ultrafast_service_tier,
            family=self.family,
        )

    def reply(self, admission: Admission, plan: ReplayPlan) -> Reply:
        return Reply(plan.usage, plan.schedule, plan.events, plan.body)
