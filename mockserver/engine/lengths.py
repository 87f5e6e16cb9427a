"""How long an answer runs: the kind of answer a prompt asks for, and a length drawn by the seed.

A live model writes a few thousand tokens for "Write a long story" and one for "Answer
with one word". The mock reads the latest user message for the same cues, in English and
Chinese, and sorts the request into one of three kinds:

- ``long``: a story, essay, article, report, chapter, "in detail", "at length",
  "1000 words"; 故事, 文章, 报告, 详细, "800字";
- ``short``: "one word", "yes or no", "briefly", "in one sentence", "be concise";
  一个词, 简短, 一句话, 是或否;
- ``default``: everything else.

A short cue wins over a long one ("summarise the report in one sentence" is short).
The fixture's ``output_tokens`` gives each kind a range; the request's seed picks the
length in it, so the same request always gets the same length.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Literal

AnswerKind = Literal["long", "short", "default"]

_LONG = re.compile(
    r"\b(?:stor(?:y|ies)|essays?|articles?|reports?|chapters?|novel(?:la)?s?|novels?|fairy ?tales?|tales?|"
    r"blog posts?|long|lengthy|in (?:great |full )?detail|detailed|at length|thorough(?:ly)?|comprehensive|"
    r"in depth|in-depth|elaborate|\d[\d,]*\s*(?:words|paragraphs|pages))\b"
    r"|故事|文章|报告|论文|小说|长篇|详细|详尽|深入|\d+\s*字",
    re.IGNORECASE,
)
_SHORT = re.compile(
    r"\b(?:one|single|1)[ -]word|\byes or no\b|\byes/no\b|\bbriefly\b|\bbrief(?:ly)? answer\b|\bbe brief\b|"
    r"\bin (?:one|a single|1) (?:sentence|line|word)\b|\bone[- ]liner?\b|\bshort answer\b|\bkeep it short\b|"
    r"\bbe concise\b|\bconcisely\b|\btl;?dr\b|\bjust the (?:number|name|answer)\b|\bonly the (?:number|name|answer)\b"
    r"|一个词|一个字|简短|简要|简单回答|一句话|是或否|是还是否|只回答",
    re.IGNORECASE,
)

# Salt so the length draw is independent of the other draws made from the same seed.
_LENGTH_SALT = 0x5EED


def answer_kind(texts: Sequence[str]) -> AnswerKind:
    """The kind of answer the latest non-empty text asks for."""
    for text in reversed(texts):
        if text.strip():
            if _SHORT.search(text):
                return "short"
            if _LONG.search(text):
                return "long"
            return "default"
    return "default"


def natural_length(seed: int, minimum: int, maximum: int) -> int:
    """How long an answer runs when nothing limits it: fixed by the seed, within ``[minimum, maximum]``."""
    return random.Random(seed ^ _LENGTH_SALT).randint(minimum, maximum)
