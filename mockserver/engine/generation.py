"""Deterministic reply content.

Text comes from ``faker`` seeded per request, in the prompt's language: Chinese
prompts get Chinese text. The same seed always gives the same tokens, so tests
can assert on content and a run is reproducible.
"""

from __future__ import annotations

import hashlib
import random
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from faker import Faker

from mockserver.config.fixture import DEFAULT_ZH_TOKENS_PER_CHARACTER
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

    def piece_text(self, lo: int, hi: int) -> Text:
        """Tokens ``lo`` to ``hi`` (exclusive), as a Text of their own."""
        return Text(self.tokens[lo:hi])


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
        """Build the English generator and load the o200k encoding now, so the first request
        doesn't pay for them (the encoding takes about 1.7 s, once per process)."""
        with _FAKER_LOCK:
            _faker("en")
        tokens.warm()

    def generate(
        self, seed: int, length: int, language: str = "en", *, tokens_per_character: float | None = None
    ) -> Text:
        """Exactly ``length`` tokens of prose: Faker's words, in sentences of 6 to 14 words.

        English tokens are o200k_base's (:func:`tokens.word_pieces`, word by word, cached), so
        re-counting the text with tiktoken gives ``length``. Chinese follows the output token model
        of :func:`_chinese`, ``tokens_per_character`` tokens per character on average.
        """
        if length <= 0:
            return Text(())
        with _FAKER_LOCK:
            fake = _faker(language)
            fake.seed_instance(seed)
            # Every word gives at least one token, so length words are always enough.
            words = fake.words(nb=length)
        if language == "zh":
            ratio = tokens_per_character if tokens_per_character is not None else DEFAULT_ZH_TOKENS_PER_CHARACTER
            return Text(tuple(_chinese(words, length, random.Random(seed), ratio)))
        return Text(tuple(_english(words, length, random.Random(seed))))


# Words that are one o200k token each, to fill the last tokens when the next word would overrun.
_FILLERS = (" the", " and", " of", " to", " in", " it", " is", " was")


def _english(words: list[str], length: int, shape: random.Random) -> list[str]:
    """Sentences of o200k tokens. A word that would overrun ``length`` is passed over, so the
    text never ends inside a word and re-counting it gives exactly ``length``."""
    out: list[str] = []
    remaining = iter(words)
    while len(out) < length:
        sentence_length = shape.randint(6, 14)
        written = 0
        for word in remaining:
            shown = word.capitalize() if written == 0 else word
            pieces = tokens.word_pieces(f" {shown}" if out else shown)  # the very first word has no space
            if len(out) + len(pieces) > length:
                continue
            out.extend(pieces)
            written += 1
            if written == sentence_length or len(out) == length:
                break
        else:  # every word was too long for the last tokens
            fillers = [f for f in _FILLERS if len(tokens.word_pieces(f)) == 1]
            while len(out) < length:
                out.append(fillers[len(out) % len(fillers)])
            break
        if len(out) < length:
            out.append(".")
    return out


def _chinese(words: list[str], length: int, shape: random.Random, ratio: float) -> list[str]:
    """Chinese sentences under the output token model: ``ratio`` tokens per character on average.

    A character worth two tokens is sent as ``""`` (a byte fragment that shows nothing yet) then
    the character, as the live API streams a character split across tokens. ``usage`` counts every
    token, so characters per second = tokens per second / ``ratio``.
    """
    out: list[str] = []
    owed = 0.0
    characters = _chinese_characters(words, shape)
    while len(out) < length:
        owed += ratio
        whole = int(owed)
        owed -= whole
        out.extend([""] * (max(whole, 1) - 1))
        out.append(next(characters))
    return out[:length]


def _chinese_characters(words: list[str], shape: random.Random) -> Iterator[str]:
    """Faker's Chinese words as characters, with a full stop every 6 to 14 words, forever."""
    while True:
        start = 0
        while start < len(words):
            sentence = words[start : start + shape.randint(6, 14)]
            start += len(sentence)
            for word in sentence:
                yield from word
            yield "。"


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
