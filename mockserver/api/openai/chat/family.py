"""Chat Completions as an API family of the request pipeline (:mod:`mockserver.api.pipeline`): its
request read for the planner, planned (:func:`mockserver.api.openai.chat.completions.plan_chat_completion`)
and answered as a completion or a stream of chunks."""

from __future__ import annotations

from collections.abc import Awaitable, Iterable
from functools import partial
from typing import Any

from mockserver.api.family import Asked, Family
from mockserver.api.openai.chat import cache_parts, completions
from mockserver.api.openai.chat.completions import ChatPlan
from mockserver.api.openai.schemas import ChatCompletionRequest
from mockserver.api.serving import Reply
from mockserver.config.fixture import Account, Fixture, ModelSpec
from mockserver.engine import in_turns
from mockserver.engine.dialects import CHAT, DialectName
from mockserver.engine.prompt_count import PromptCount
from mockserver.server_state import ServerState
from mockserver.service import access, context_window
from mockserver.service.access import Admission
from mockserver.service.exchange import Exchange
from mockserver.service.prompt_cache import Part


class ChatAsked(Asked[ChatPlan]):
    """One ``POST /v1/chat/completions``: its body, and its messages as the plan reads them (each one's
    role and :func:`~mockserver.api.openai.chat.completions.message_text`), read once the prompt has
    passed the window, with the event loop's turns through a long conversation."""

    reads_ahead = True

    __slots__ = ("body", "items")

    def __init__(
        self, state: ServerState, exchange: Exchange, account: Account, body: ChatCompletionRequest, raw: Any
    ) -> None:
        super().__init__(
            state, exchange, account, raw, model=body.model, service_tier=body.service_tier, stream=bool(body.stream)
        )
        self.body = body
        self.items: list[tuple[str, str]] | None = None

    def measured_at_once(self, model: ModelSpec) -> PromptCount | None:
        return context_window.measured_at_once(model, self.raw)

    def measure(self, model: ModelSpec, dialect: DialectName) -> Awaitable[PromptCount]:
        # Asked for only when measured_at_once could not count the prompt: it is not tried at once again.
        return context_window.measured_in_turns(model, self.raw, dialect)

    def read_ahead(self) -> Awaitable[None] | None:
        if len(self.body.messages) <= in_turns.ITEMS_PER_TURN:
            return None  # a few messages (most): the plan reads them itself, in one call
        return self._read_in_turns()

    async def _read_in_turns(self) -> None:
        self.items = await in_turns.mapped(completions.role_and_text, self.body.messages)

    def cache_parts(self) -> Iterable[Part]:
        return cache_parts.chat_parts(self.body, self.raw)

    def plan(self, admission: Admission) -> ChatPlan:
        return completions.plan_chat_completion(self.state, admission, self.body, self.raw, self.exchange, self.items)

    def reply(self, admission: Admission, plan: ChatPlan) -> Reply:
        return Reply(
            plan.exchange_usage(),
            plan.schedule,
            partial(completions.stream_chunks, plan, per_chunk=admission.profile.tokens_per_chunk),
            partial(completions.completion_body, plan),
        )


class ChatCompletions(Family[ChatCompletionRequest]):
    """The Chat Completions API: bearer keys, OpenAI's wording, no early refusals of its own."""

    dialect = CHAT
    request_model = ChatCompletionRequest

    authenticate = staticmethod(access.authenticate)  # a bearer key

    def refuse_early(self, fixture: Fixture, body: ChatCompletionRequest) -> None:
        """Nothing: every check of the body is made where the plan reads it."""

    def asked(
        self, state: ServerState, exchange: Exchange, account: Account, body: ChatCompletionRequest, raw: Any
    ) -> ChatAsked:
        return ChatAsked(state, exchange, account, body, raw)


CHAT_COMPLETIONS = ChatCompletions()
