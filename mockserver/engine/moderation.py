"""What ``omni-moderation-latest`` says of an input: the fixture's rules decide, nothing else.

A result covers one input: a text, or a set of parts (texts and images, as one multi-modal input
is sent). Every rule of ``moderation.rules`` whose pattern matches a part of a type it applies to
(a text's words, an image's URL) flags its categories with its score; any category flagged makes
``flagged`` true. The other categories get low scores, drawn from a hash of the input and the
category: the same input always scores the same, and no unflagged score reaches 0.01.

``category_applied_input_types`` names the types of part each category was scored on, as the
live API reports them: text categories on text; the image categories (:data:`IMAGE_CATEGORIES`)
on text and images.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mockserver.config import patterns
from mockserver.config.moderation import CATEGORIES, IMAGE_CATEGORIES, ModerationRule

UNFLAGGED_CEILING = 0.01


@dataclass(frozen=True)
class Part:
    """One part of an input: its type (``text`` or ``image``) and its text or image URL."""

    type: str
    content: str


def classify(rules: Sequence[ModerationRule], parts: Sequence[Part]) -> dict[str, Any]:
    """One ``results[]`` entry for an input made of ``parts``."""
    scores: dict[str, float] = {}
    for rule in rules:
        if any(part.type in rule.input_types and patterns.search(rule.pattern, part.content) for part in parts):
            for category in rule.categories:
                scores[category] = max(scores.get(category, 0.0), rule.score)
    types = {part.type for part in parts}
    seed = "\x00".join(f"{part.type}:{part.content}" for part in parts)
    categories = {category: category in scores for category in CATEGORIES}
    return {
        "flagged": any(categories.values()),
        "categories": categories,
        "category_scores": {c: scores.get(c, _low_score(seed, c)) for c in CATEGORIES},
        "category_applied_input_types": {c: _applied(c, types) for c in CATEGORIES},
    }


def _applied(category: str, types: set[str]) -> list[str]:
    applied = ["text"] if "text" in types else []
    if category in IMAGE_CATEGORIES and "image" in types:
        applied.append("image")
    return applied


def _low_score(seed: str, category: str) -> float:
    """A score below :data:`UNFLAGGED_CEILING`, the same for the same input and category."""
    digest = hashlib.blake2b(f"{category}\x00{seed}".encode(), digest_size=8).digest()
    fraction = int.from_bytes(digest, "big") / 2**64
    return UNFLAGGED_CEILING * fraction**3  # mostly tiny, as the live scores of harmless text are
