"""Anthropic's Messages as an API family of the request pipeline (:mod:`mockserver.api.pipeline`): the
key in ``x-api-key``, refusals worded as Anthropic words them, fast mode refused on a model without
it, the conversation read before it is admitted (:func:`mockserver.api.anthropic.turns.read_ahead`),
planned (:func:`mockserver.api.anthropic.messages.plan_message`) and answered as a Message or its
stream of events."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any

from mockserver.api.anthropic import auth, cache_parts, event_stream, messages, turns
from mockserver.api.anthropic.errors import BODY_WORDING
from mockserver.api.anthropic.messages import MessagePlan
from mockserver.api.anthropic.replayed import stream_of_message
from mockserver.api.anthropic.schemas import MessagesRequest
from mockserver.api.family import Asked, Family
from mockserver.api.serving import Reply
from mockserver.config.fixture import Account
from mockserver.engine.dialects import ANTHROPIC
from mockserver.server_state import ServerState
from mockserver.service.access import Admission
from mockserver.service.exchange import Exchange
from mockserver.service.prompt_cache import Part


class MessageAsked(Asked[MessagePlan]):
    """One ``POST /v1/messages``: its body, and its conversation (:attr:`reading`) read before it is
    admitted, with the event loop's turns between messages, for the prompt cache and the plan."""

    reads_first = True

    __slots__ = ("body", "reading")

    def __init__(
        self, state: ServerState, exchange: Exchange, account: Account, body: MessagesRequest, raw: Any
    ) -> None:
        super().__init__(
            state,
            exchange,
            account,
            raw,
            model=body.model,
            service_tier=messages.tier_for(body),
            stream=bool(body.stream),
        )
        self.body = body
        self.reading: turns.Reading | None = None

    async def read(self) -> None:
        self.reading = await turns.read_ahead(self.body.system, self.body.messages)

    def cache_parts(self) -> Iterable[Part]:
        assert self.reading is not None  # read before it is admitted
        return cache_parts.message_parts(self.body, self.reading)

    def plan(self, admission: Admission) -> MessagePlan:
        return messages.plan_message(self.state, admission, self.body, self.raw, self.exchange, self.reading)

    def reply(self, admission: Admission, plan: MessagePlan) -> Reply:
        return Reply(
            plan.exchange_usage(),
            plan.schedule,
            partial(event_stream.stream_events, plan, per_chunk=admission.profile.tokens_per_chunk),
            partial(messages.message_body, plan),
        )


class Messages(Family[MessagesRequest]):
    """Anthropic's Messages API."""

    dialect = ANTHROPIC
    request_model = MessagesRequest
    wording = BODY_WORDING
    replay_stream = staticmethod(stream_of_message)

    authenticate = staticmethod(auth.authenticate)  # x-api-key (or a bearer key) and anthropic-version
    refuse_early = staticmethod(messages.check_speed)  # fast mode on a model that has none

    def asked(
        self, state: ServerState, exchange: Exchange, account: Account, body: MessagesRequest, raw: Any
    ) -> MessageAsked:
        return MessageAsked(state, exchange, account, body, raw)


MESSAGES = Messages()
