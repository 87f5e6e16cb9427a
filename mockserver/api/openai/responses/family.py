"""The Responses API as an API family of the request pipeline (:mod:`mockserver.api.pipeline`): its
request read with the earlier turn it continues, held to the model's window with that turn
(:mod:`mockserver.api.openai.responses.prompt_fit`), planned
(:func:`mockserver.api.openai.responses.lifecycle.plan_response`), kept for later turns, and answered
whole, ``queued`` (a background response) or as a stream of events."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mockserver.api.family import Asked, Family
from mockserver.api.openai.responses import cache_parts, event_stream, lifecycle, prompt_fit
from mockserver.api.openai.responses.lifecycle import ResponsePlan
from mockserver.api.openai.responses.replayed import stream_of_response
from mockserver.api.openai.schemas import ResponseCreateRequest
from mockserver.api.serving import Reply
from mockserver.config.fixture import Account, Fixture, ModelSpec
from mockserver.engine.dialects import RESPONSES, DialectName
from mockserver.engine.prompt_count import PromptCount
from mockserver.server_state import ServerState
from mockserver.service import access, context_window
from mockserver.service.access import Admission
from mockserver.service.exchange import Exchange
from mockserver.service.prompt_cache import Part
from mockserver.state.responses import StoredResponse


class ResponseAsked(Asked[ResponsePlan]):
    """One ``POST /v1/responses``: its body, the stored response it continues (:attr:`previous`, read
    before it is admitted), and its conversation as the window check fitted it (:attr:`fitted`)."""

    reads_first = True

    __slots__ = ("body", "fitted", "previous")

    def __init__(
        self, state: ServerState, exchange: Exchange, account: Account, body: ResponseCreateRequest, raw: Any
    ) -> None:
        super().__init__(
            state, exchange, account, raw, model=body.model, service_tier=body.service_tier, stream=bool(body.stream)
        )
        self.body = body
        self.previous: StoredResponse | None = None
        self.fitted: prompt_fit.Fitted | None = None

    async def read(self) -> None:
        self.previous = await lifecycle.earlier_turn(self.state, self.account.project, self.body.previous_response_id)

    async def measure(self, model: ModelSpec, dialect: DialectName) -> PromptCount:
        """The prompt tokens held to ``model``'s window, with the conversation it continues (raising the
        live 400 past it), or fitted to it by ``truncation: "auto"``."""
        body = self.body
        if body.previous_response_id is not None or body.truncation == "auto":
            self.fitted = await prompt_fit.fitted(model, body, self.raw, self.previous)
        if self.fitted is None:
            return await context_window.measure(model, self.raw, dialect)
        return PromptCount(self.fitted.input_tokens)

    def cache_parts(self) -> Iterable[Part]:
        dropped = self.fitted.dropped if self.fitted is not None else 0
        return cache_parts.response_parts(self.body, self.raw, self.previous, dropped=dropped)

    def plan(self, admission: Admission) -> ResponsePlan:
        return lifecycle.plan_response(
            self.state, admission, self.body, self.raw, self.previous, self.exchange, self.fitted
        )

    def reply(self, admission: Admission, plan: ResponsePlan) -> Reply:
        """A background response that does not stream is answered at once, ``queued``; a background
        stream stops where its response is cancelled, by any process."""
        stream = self.stream
        schedule, body = lifecycle.first_reply(plan, stream=stream)
        watch = plan.background and stream
        events = event_stream.event_source(
            plan,
            per_chunk=admission.profile.tokens_per_chunk,
            cancelled=self.state.responses.cancel_flag(plan.id, plan.schedule.end) if watch else None,
        )
        return Reply(plan.exchange_usage(), schedule, events, body)


class Responses(Family[ResponseCreateRequest]):
    """The Responses API: bearer keys, OpenAI's wording; its responses are kept for later turns."""

    dialect = RESPONSES
    request_model = ResponseCreateRequest
    replay_stream = staticmethod(stream_of_response)
    keeps_replies = True

    authenticate = staticmethod(access.authenticate)  # a bearer key

    def refuse_early(self, fixture: Fixture, body: ResponseCreateRequest) -> None:
        """Nothing: every check of the body is made where the plan reads it."""

    def asked(
        self, state: ServerState, exchange: Exchange, account: Account, body: ResponseCreateRequest, raw: Any
    ) -> ResponseAsked:
        return ResponseAsked(state, exchange, account, body, raw)

    async def keep(self, asked: Asked[Any], plan: ResponsePlan) -> None:
        await lifecycle.remember(asked.state, plan, asked.exchange)


RESPONSES_FAMILY = Responses()
