"""Deterministic reply content.

Text comes from ``faker`` seeded per request, in the prompt's language: Chinese
prompts get Chinese text. The same seed always gives the same tokens, so tests
can assert on content and a run is reproducible.
"""

from __future__ import annotations

import hashlib
import random
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from faker import Faker

from mockserver.engine import tokens
from mockserver.engine.lengths import AnswerKind, answer_kind

LOCALES = {"en": "en_US", "zh": "zh_CN"}


# Fields that say how a reply is delivered, not what it says: streaming or storing a request
# must not change its content, so the content seed ignores them.
DELIVERY_FIELDS = frozenset({"stream", "stream_options", "store", "background"})


def content_fields(body: Any) -> Any:
    """The request minus :data:`DELIVERY_FIELDS`: what the content seed hashes."""
    if isinstance(body, dict):
        return {k: v for k, v in body.items() if k not in DELIVERY_FIELDS}
    return body


def request_seed(body: Any, global_seed: int, explicit: int | None = None) -> int:
    """The content seed: the request's own ``seed``, or a hash of its content fields and the global seed.

    Delivery fields (:data:`DELIVERY_FIELDS`) are left out, so the streamed and non-streamed
    forms of one request say the same thing, on every API.
    """
    if explicit is not None:
        return explicit
    digest = hashlib.blake2b(
        orjson.dumps(content_fields(body), option=orjson.OPT_SORT_KEYS, default=str) + str(global_seed).encode(),
        digest_size=8,
    ).digest()
    return int.from_bytes(digest, "big")


@dataclass(frozen=True)
class Text:
    """Generated text as tokens. ``text`` is their concatenation."""

    tokens: tuple[str, ...]

    @property
    def text(self) -> str:
        return "".join(self.tokens)

    def __len__(self) -> int:
        return len(self.tokens)

    def piece(self, lo: int, hi: int) -> str:
        """The text of tokens ``lo`` to ``hi`` (exclusive); one token without a join, as streams mostly ask."""
        if hi == lo + 1 and lo < len(self.tokens):
            return self.tokens[lo]
        return "".join(self.tokens[lo:hi])

    def cut(self, limit: int) -> Text:
        return Text(self.tokens[:limit])


# Faker instances are costly to build (~40 ms each), so one per locale serves every server in the
# process. Faker keeps its random state on the instance, and several servers may share this
# process (tests start them in threads), so generation holds one lock.
_FAKERS: dict[str, Faker] = {}
_FAKER_LOCK = threading.Lock()


def _faker(language: str) -> Faker:
    locale = LOCALES.get(language, LOCALES["en"])
    if locale not in _FAKERS:
        _FAKERS[locale] = Faker(locale)
    return _FAKERS[locale]


class TextGenerator:
    """Makes token sequences of an exact length from a seed."""

    def warm(self) -> None:
        """Build the English generator now, so the first request doesn't pay for it."""
        with _FAKER_LOCK:
            _faker("en")

    def generate(self, seed: int, length: int, language: str = "en") -> Text:
        """Exactly ``length`` tokens of prose: Faker's words, in sentences of 6 to 14 words.

        Tokens are built straight from the words (one per word, with its leading space, and
        one per full stop; one per character in Chinese), which is what :func:`tokens.split`
        would make of the text, at a tenth of the cost: long Ultrafast replies are planned
        while their TTFT runs.
        """
        if length <= 0:
            return Text(())
        with _FAKER_LOCK:
            fake = _faker(language)
            fake.seed_instance(seed)
            # Every word gives at least one token, so length words are always enough.
            words = fake.words(nb=length)
        shape = random.Random(seed)
        out: list[str] = []
        start = 0
        while len(out) < length:
            sentence = words[start : start + shape.randint(6, 14)]
            start += len(sentence)
            if language == "zh":
                for word in sentence:
                    out.extend(word)
                out.append("。")
            else:
                first = sentence[0].capitalize()
                out.append(f" {first}" if out else first)
                out.extend(f" {word}" for word in sentence[1:])
                out.append(".")
        return Text(tuple(out[:length]))


def language_of(texts: Sequence[str]) -> str:
    """``zh`` when the latest text is Chinese, else ``en``."""
    for text in reversed(texts):
        if text.strip():
            return "zh" if tokens.is_chinese(text) else "en"
    return "en"


@dataclass(frozen=True)
class Cues:
    """What the prompt says about the answer, for any API: its language, the kind of length
    asked for (:mod:`.lengths`), and every text of the conversation (where a JSON Schema for a
    ``json_object`` answer may be described)."""

    language: str
    kind: AnswerKind
    texts: tuple[str, ...] = ()


def cues_of(user_texts: Sequence[str], all_texts: Sequence[str]) -> Cues:
    """The cues of a conversation: the latest user text decides language and kind (the other
    texts when there is no user text)."""
    latest = list(user_texts) or list(all_texts)
    return Cues(language_of(latest), answer_kind(latest), tuple(all_texts))


def apply_stop(text: Text, stop: Sequence[str]) -> tuple[Text, bool]:
    """Cut ``text`` before the first stop sequence. Returns the text and whether it was cut."""
    joined = text.text
    positions = [joined.find(s) for s in stop if s]
    positions = [p for p in positions if p >= 0]
    if not positions:
        return text, False
    cut_at = min(positions)
    kept: list[str] = []
    length = 0
    for token in text.tokens:
        if length + len(token) > cut_at:
            remainder = cut_at - length
            if remainder > 0:
                kept.append(token[:remainder])
            break
        kept.append(token)
        length += len(token)
    return Text(tuple(kept)), True
