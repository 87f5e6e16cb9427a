"""The results of one moderations request: one per string, or one for an array of parts.

The live API answers an array of strings with one result each, and an array of multi-modal parts
(texts and images) with a single result for all of them, which is what this does.

Each text is moderated on its first :data:`MAX_INPUT_TOKENS` tokens, as the live model does: OpenAI
documents that a longer input is truncated (which may leave a few tokens out of the check), not
refused. So the fixture's rules see that much of each text, and that much is counted in ``usage``
and the token window; counting stops there, so a text of any length costs the same bounded work.

Limits: at most :data:`MAX_IMAGES` image per request, refused in the live API's words
(``400 Number of images (2) exceeds maximum of 1``, code ``too_many_images``); and at most
:data:`MAX_INPUTS` strings or parts, refused as the live API refuses any array past its maximum
(code ``array_above_max_length``). OpenAI publishes no figure for the second; it is an
assumption that keeps the reply bounded (each result is about 1.3 KB of JSON, so 2,048 inputs make
under 3 MB, where three bytes of ``"",`` per input once made a 32 MiB body into gigabytes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mockserver import errors
from mockserver.api.openai.moderations.schemas import ModerationRequest, ModerationTextInput
from mockserver.config.moderation import ModerationRule
from mockserver.engine import moderation, tokens
from mockserver.engine.moderation import Part

MAX_INPUTS = 2_048  # assumption: the embeddings endpoint's figure; the live API publishes none
MAX_IMAGES = 1
MAX_INPUT_TOKENS = 32_768  # the live models' maximum per input: past it, the text is truncated
_PIECE_CHARS = 16_384  # a long text is counted this many characters at a time, up to the maximum


@dataclass(frozen=True)
class ModerationPlan:
    model: str
    results: list[dict[str, Any]]
    input_tokens: int  # the texts' o200k_base tokens: what the request costs in the token window


def plan_moderation(rules: Sequence[ModerationRule], body: ModerationRequest) -> ModerationPlan:
    inputs: list[list[Part]] = []
    counted = 0
    for parts in _inputs(body):
        read: list[Part] = []
        for part in parts:
            if part.type != "text":
                read.append(part)
                continue
            text, tokens_read = model_reads(part.content)
            read.append(Part("text", text))
            counted += tokens_read
        inputs.append(read)
    return ModerationPlan(body.model, [moderation.classify(rules, parts) for parts in inputs], counted)


def model_reads(text: str) -> tuple[str, int]:
    """The part of ``text`` the model moderates (its first :data:`MAX_INPUT_TOKENS` tokens), and its tokens."""
    if len(text) <= MAX_INPUT_TOKENS:  # counted whole, a bounded work (a character may be several tokens)
        counted = tokens.count(text)
        if counted <= MAX_INPUT_TOKENS:
            return text, counted
    total = kept = 0
    for piece in tokens.pieces(text, _PIECE_CHARS):
        counted = tokens.count(piece)
        if total + counted > MAX_INPUT_TOKENS:
            head = "".join(tokens.split(piece)[: MAX_INPUT_TOKENS - total])
            return text[:kept] + head, MAX_INPUT_TOKENS
        total, kept = total + counted, kept + len(piece)
    return text, total


def document(plan: ModerationPlan, moderation_id: str) -> dict[str, Any]:
    return {"id": moderation_id, "model": plan.model, "results": plan.results}


def check_limits(body: ModerationRequest) -> None:
    """Refuse, as live, an input array past :data:`MAX_INPUTS` or more than :data:`MAX_IMAGES` image."""
    value = body.input
    if isinstance(value, str):
        return
    if len(value) > MAX_INPUTS:
        raise errors.InvalidRequestError(
            f"Invalid 'input': array too long. Expected an array with maximum length {MAX_INPUTS}, "
            f"but got an array with length {len(value)} instead.",
            param="input",
            code="array_above_max_length",
        )
    images = sum(1 for item in value if not isinstance(item, str | ModerationTextInput))
    if images > MAX_IMAGES:
        raise errors.InvalidRequestError(
            f"Number of images ({images}) exceeds maximum of {MAX_IMAGES}", param="input", code="too_many_images"
        )


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
