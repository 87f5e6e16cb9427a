"""Chat Completions: plan a reply, then render it whole or as a paced stream.

A :class:`ChatPlan` fixes everything up front: the text of each choice, the
finish reasons, the usage and the token schedule. Rendering only reads it, so a
stream and a non-streaming reply of the same request carry the same content.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from mockserver import generation, tokens
from mockserver.access import Admission
from mockserver.config import Fixture
from mockserver.exchange import Usage
from mockserver.generation import Text
from mockserver.pacing import Pacer, Schedule
from mockserver.schemas import ChatCompletionRequest
from mockserver.state import ServerState
from mockserver.streaming import DONE, data_event


@dataclass(frozen=True)
class ChatChoice:
    index: int
    text: Text
    finish_reason: str


@dataclass(frozen=True)
class ChatPlan:
    id: str
    created: int
    model: str
    service_tier: str
    system_fingerprint: str
    prompt_tokens: int
    reasoning_tokens: int
    choices: tuple[ChatChoice, ...]
    include_usage: bool
    schedule: Schedule

    @property
    def text_steps(self) -> int:
        """Token steps of visible text; choices advance side by side, one token per step."""
        return max((len(c.text) for c in self.choices), default=0)

    @property
    def completion_tokens(self) -> int:
        return sum(len(c.text) for c in self.choices) + self.reasoning_tokens * len(self.choices)

    def exchange_usage(self) -> Usage:
        reasoning = self.reasoning_tokens * len(self.choices)
        return Usage(self.prompt_tokens, self.completion_tokens, reasoning)

    def usage(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": self.reasoning_tokens * len(self.choices),
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        }


def reasoning_tokens_for(fixture: Fixture, admission: Admission, effort: str | None) -> int:
    if not admission.model.reasoning:
        return 0
    effort = effort or fixture.default_reasoning_effort
    return fixture.reasoning_tokens.get(effort, 0) if effort else 0  # type: ignore[call-overload]


def reported_tier(fixture: Fixture, tier: str) -> str:
    """The ``service_tier`` a Chat Completion may show (see ``Policies.chat_ultrafast_service_tier``)."""
    if tier == "ultrafast":
        return fixture.policies.chat_ultrafast_service_tier
    return tier


def plan_chat_completion(
    state: ServerState, admission: Admission, body: ChatCompletionRequest, raw_body: Any
) -> ChatPlan:
    fixture = state.fixture
    texts = [m.text() for m in body.messages]
    seed = generation.request_seed(raw_body, state.settings.seed, body.seed)
    language = generation.language_of([m.text() for m in body.messages if m.role == "user"] or texts)
    limit = body.output_limit
    choices = []
    for index in range(body.n or 1):
        choice_seed = seed + index
        length = admission.overrides.output_tokens
        if length is None:
            length = generation.natural_length(choice_seed, fixture.output_tokens.min, fixture.output_tokens.max)
        text = state.generator.generate(choice_seed, length, language)
        text, stopped = generation.apply_stop(text, body.stop_sequences)
        finish = "stop"
        if limit is not None and len(text) > limit:
            text, finish = text.cut(limit), "length"
        choices.append(ChatChoice(index, text, finish))
    reasoning = reasoning_tokens_for(fixture, admission, body.reasoning_effort)
    steps = max((len(c.text) for c in choices), default=0)
    profile = admission.profile
    schedule = Schedule.build(
        start=state.clock.now(),
        ttft=profile.ttft_ms / 1000,
        tokens_per_second=profile.tokens_per_second,
        total_tokens=reasoning + steps,
        jitter=profile.jitter,
        time_scale=state.settings.time_scale,
        rng=random.Random(seed),
    )
    return ChatPlan(
        id=state.ids.chat_completion(),
        created=int(state.wall_clock()),
        model=admission.model.id,
        service_tier=reported_tier(fixture, admission.tier.tier),
        system_fingerprint=state.system_fingerprint,
        prompt_tokens=tokens.count_messages(texts),
        reasoning_tokens=reasoning,
        choices=tuple(choices),
        include_usage=bool(body.stream_options and body.stream_options.include_usage),
        schedule=schedule,
    )


def completion_body(plan: ChatPlan) -> dict[str, Any]:
    """The non-streaming ``ChatCompletion`` object."""
    return {
        "id": plan.id,
        "object": "chat.completion",
        "created": plan.created,
        "model": plan.model,
        "choices": [
            {
                "index": c.index,
                "message": {"role": "assistant", "content": c.text.text, "refusal": None, "annotations": []},
                "logprobs": None,
                "finish_reason": c.finish_reason,
            }
            for c in plan.choices
        ],
        "usage": plan.usage(),
        "service_tier": plan.service_tier,
        "system_fingerprint": plan.system_fingerprint,
    }


async def stream_chunks(plan: ChatPlan, pacer: Pacer, *, per_chunk: int) -> AsyncIterator[bytes]:
    """The ``ChatCompletionChunk`` events of a paced stream, ending with ``[DONE]``."""
    envelope = _envelope(plan)
    usage_field: dict[str, Any] = {"usage": None} if plan.include_usage else {}

    def chunk(choices: list[dict[str, Any]]) -> bytes:
        return data_event({**envelope, "choices": choices, **usage_field})

    def choice(index: int, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {"index": index, "delta": delta, "logprobs": None, "finish_reason": finish_reason}

    first = plan.reasoning_tokens
    await pacer.wait_for_token(first)
    for c in plan.choices:
        yield chunk([choice(c.index, {"role": "assistant", "content": "", "refusal": None})])
    async for lo, hi in pacer.batches(first, first + plan.text_steps, per_chunk):
        for c in plan.choices:
            piece = "".join(c.text.tokens[lo - first : hi - first])
            if piece:
                yield chunk([choice(c.index, {"content": piece})])
    await pacer.wait_for_end()
    for c in plan.choices:
        yield chunk([choice(c.index, {}, c.finish_reason)])
    if plan.include_usage:
        yield data_event({**envelope, "choices": [], "usage": plan.usage()})
    yield DONE


def _envelope(plan: ChatPlan) -> dict[str, Any]:
    return {
        "id": plan.id,
        "object": "chat.completion.chunk",
        "created": plan.created,
        "model": plan.model,
        "system_fingerprint": plan.system_fingerprint,
        "service_tier": plan.service_tier,
    }
