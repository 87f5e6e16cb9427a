"""The results of one moderations request: one per string, or one for an array of parts.

The live API answers an array of strings with one result each, and an array of multi-modal parts
(texts and images) with a single result for all of them, which is what this does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mockserver.api.openai.moderations.schemas import ModerationRequest, ModerationTextInput
from mockserver.config.moderation import ModerationRule
from mockserver.engine import moderation, tokens
from mockserver.engine.moderation import Part


@dataclass(frozen=True)
class ModerationPlan:
    model: str
    results: list[dict[str, Any]]
    input_tokens: int  # the texts' o200k_base tokens: what the request costs in the token window


def plan_moderation(rules: Sequence[ModerationRule], body: ModerationRequest) -> ModerationPlan:
    inputs = _inputs(body)
    counted = sum(tokens.count(part.content) for parts in inputs for part in parts if part.type == "text")
    return ModerationPlan(body.model, [moderation.classify(rules, parts) for parts in inputs], counted)


def document(plan: ModerationPlan, moderation_id: str) -> dict[str, Any]:
    return {"id": moderation_id, "model": plan.model, "results": plan.results}


def _inputs(body: ModerationRequest) -> list[list[Part]]:
    value = body.input
    if isinstance(value, str):
        return [[Part("text", value)]]
    if all(isinstance(item, str) for item in value):
        return [[Part("text", item)] for item in value if isinstance(item, str)]
    return [
        [
            Part("text", item.text) if isinstance(item, ModerationTextInput) else Part("image", item.image_url.url)
            for item in value
            if not isinstance(item, str)
        ]
    ]
