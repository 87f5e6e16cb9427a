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

A prompt that states a size ("in 200 words", "about 500 tokens", "写800字") gets about that
size instead (:func:`size_of`, within 10%), converted to tokens by :func:`stated_tokens`.

A long message is read for cues in its first and last :data:`CUE_CHARS` characters only: that is
where an instruction sits around a pasted document, and the cue patterns cost about a second per
600 kB of text, which would otherwise hold the event loop for a long prompt.
"""

from __future__ import annotations

import random
import re
from typing import Literal

from mockserver.config.patterns import deferred_re

AnswerKind = Literal["long", "short", "default"]

# The cue phrases, grouped by their first letters (and one \b in front of them all): the patterns
# are searched at every position of a prompt, and this way a position is given up at its first
# character or two instead of after a try of every phrase (4x faster for _SHORT). The phrases
# one per line are in tests/engine/test_lengths.py, which checks that these match the same texts.
# Each pattern opens with a look at the first character: the first characters its phrases can start
# with (the same case-insensitive way), so that most positions are given up after one class test,
# before the word boundary and the groups are tried (about 1.5x faster on a short prompt).
_LONG = deferred_re(
    r"(?=[seacrnftbldi\d故文报论小长详深])"
    r"(?:\b(?:stor(?:y|ies)|e(?:ssays?|laborate)|a(?:rticles?|t length)|reports?|c(?:hapters?|omprehensive)"
    r"|novel(?:la)?s?|fairy ?tales?|t(?:ales?|horough(?:ly)?)|blog posts?|l(?:ong|engthy)"
    r"|in(?: (?:(?:great |full )?detail|depth)|-depth)|detailed|\d[\d,]*\s*(?:words|paragraphs|pages))\b"
    r"|故事|文章|报告|论文|小说|长篇|详[细尽]|深入|\d+\s*字)",
    re.IGNORECASE,
)
_SHORT = deferred_re(
    r"(?=[osbiyktcj1一简是只])"
    r"(?:\b(?:o(?:ne(?:[ -]word|[- ]liner?\b)|nly the (?:number|name|answer)\b)"
    r"|s(?:ingle[ -]word|hort answer\b)|1[ -]word|yes(?: or no|/no)\b"
    r"|b(?:rief(?:ly\b|(?:ly)? answer\b)|e (?:brief|concise)\b)"
    r"|in (?:one|a single|1) (?:sentence|line|word)\b|keep it short\b|concisely\b|tl;?dr\b"
    r"|just the (?:number|name|answer)\b)"
    r"|一个[词字]|简[短要]|简单回答|一句话|是(?:或|还是)否|只回答)",
    re.IGNORECASE,
)

CUE_CHARS = 4_096


def cue_text(text: str) -> str:
    """The part of a message read for cues: all of it, or its first and last :data:`CUE_CHARS` characters."""
    if len(text) <= 2 * CUE_CHARS:
        return text
    return f"{text[:CUE_CHARS]}\n{text[-CUE_CHARS:]}"


# Salt so the length draw is independent of the other draws made from the same seed.
_LENGTH_SALT = 0x5EED


# Words that every phrase of a pattern contains, in a text of ASCII characters alone (most prompts),
# where ignoring case is plain ASCII case folding: a text with none of them in it, lower-cased, is
# passed over without the search, which tries every position of the text (a few microseconds on
# every request; a few ``in`` tests cost a fraction of that). tests/engine/test_lengths.py checks
# that the kinds and sizes found are the same as the patterns alone find.
_SHORT_WORDS = ("word", "line", "only", "short", "yes", "brief", "concise", "sentence", "tl;dr", "tldr", "just")
_LONG_WORDS = (
    "stor", "essay", "elaborate", "article", "length", "report", "chapter", "comprehensive", "novel", "tale",
    "thorough", "blog", "long", "detail", "depth", "word", "paragraph", "page",
)  # fmt: skip
_STATED_WORDS = ("word", "token")


def _mentions(folded: str | None, words: tuple[str, ...]) -> bool:
    """Whether a pattern whose phrases each contain one of ``words`` may match the text: ``folded`` is
    the text lower-cased when it is ASCII, None otherwise (then the pattern decides)."""
    if folded is not None:
        for word in words:  # a loop rather than any(): no generator made, on every request's path
            if word in folded:
                break
        else:
            return False
    return True


def _folded(cued: str) -> str | None:
    """``cued`` lower-cased if it is ASCII alone (see :func:`_mentions`), else None."""
    return cued.lower() if cued.isascii() else None


def kind_of(cued: str) -> AnswerKind:
    """The kind of answer one text asks for, given its :func:`cue_text`."""
    return _kind(cued, _folded(cued))


def _kind(cued: str, folded: str | None) -> AnswerKind:
    if _mentions(folded, _SHORT_WORDS) and _SHORT.search(cued):
        return "short"
    if _mentions(folded, _LONG_WORDS) and _LONG.search(cued):
        return "long"
    return "default"


def kind_and_size(cued: str) -> tuple[AnswerKind, tuple[int, StatedUnit] | None]:
    """:func:`kind_of` and :func:`size_of` of one text, given its :func:`cue_text`, folded once."""
    folded = _folded(cued)
    return _kind(cued, folded), _size(cued, folded)


def natural_length(seed: int, minimum: int, maximum: int) -> int:
    """How long an answer runs when nothing limits it: fixed by the seed, within ``[minimum, maximum]``."""
    return random.Random(seed ^ _LENGTH_SALT).randint(minimum, maximum)


# OpenAI's rule of thumb: a token is about three quarters of an English word.
TOKENS_PER_WORD = 4 / 3
StatedUnit = Literal["words", "tokens", "zh_characters"]  # English "characters" is too often people

# A number (not part of a longer one or of a decimal) and a unit. The pattern opens with the digit,
# and looks back from after it, so that the search skips to digits instead of trying every position
# (15x faster); it matches what "(?<![\d.])(\d{1,3}(?:,\d{3})+|\d{1,7})..." does (tests/engine/test_lengths.py).
_STATED = deferred_re(
    r"(\d(?<![\d.]\d)(?:\d{0,2}(?:,\d{3})+|\d{0,6}))\s*(?:-\s*)?"
    r"(?:(?P<words>words?\b)|(?P<tokens>tokens?\b)|(?P<zh>个?字|个汉字))",
    re.IGNORECASE,
)


def size_of(cued: str) -> tuple[int, StatedUnit] | None:
    """The size one text asks for, given its :func:`cue_text`, or None."""
    return _size(cued, _folded(cued))


def _size(cued: str, folded: str | None) -> tuple[int, StatedUnit] | None:
    if not _mentions(folded, _STATED_WORDS):
        return None
    match = _STATED.search(cued)
    if match is None:
        return None
    number = int(match.group(1).replace(",", ""))
    unit: StatedUnit = "words" if match["words"] else "tokens" if match["tokens"] else "zh_characters"
    return (number, unit) if number > 0 else None


def stated_tokens(size: tuple[int, StatedUnit], tokens_per_character: float | None) -> int:
    """Output tokens for a stated size: words at 4/3 tokens each, Chinese characters at the output
    token model's tokens per character."""
    number, unit = size
    if unit == "tokens":
        return number
    if unit == "words":
        return round(number * TOKENS_PER_WORD)
    return round(number * (tokens_per_character or 1.0))


def around(seed: int, target: int, most: int) -> int:
    """A length within 10% of ``target``, fixed by the seed, at most ``most``."""
    low, high = max(1, round(target * 0.9)), max(1, round(target * 1.1))
    return min(most, natural_length(seed, low, high))
