"""Deterministic reply content.

Text comes from ``faker`` seeded per request, in the prompt's language: Chinese
prompts get Chinese text. The same seed always gives the same tokens, so tests
can assert on content and a run is reproducible.
"""

from __future__ import annotations

import hashlib
import itertools
import random
import threading
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import orjson

from mockserver.config.fixture import DEFAULT_ZH_TOKENS_PER_CHARACTER
from mockserver.engine import tokens
from mockserver.engine.lengths import AnswerKind, StatedUnit, cue_text, kind_and_size

if TYPE_CHECKING:
    from faker import Faker

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


_MAKE_AHEAD = 32  # tokens a lazy text makes at a time


class Text:
    """Generated text as tokens. ``text`` is their concatenation.

    A text may be *lazy*: its length is known at once, its tokens are made as they are first
    asked for (:meth:`piece` asks only up to where it reads). A long generated reply is then
    planned in microseconds and its words are made while it streams, off the first token's
    path. Reading :attr:`tokens` or :attr:`text` makes the rest.
    """

    __slots__ = ("_length", "_made", "_source")

    def __init__(
        self, tokens: Sequence[str] = (), *, source: Iterator[list[str]] | None = None, length: int = 0
    ) -> None:
        self._made: list[str] = list(tokens)
        self._source = source
        self._length = length if source is not None else len(self._made)

    def _make(self, count: int) -> None:
        """Make tokens until ``count`` exist (or the text is complete), a block at a time."""
        made, source = self._made, self._source
        if source is not None and len(made) < count:
            want = min(self._length, max(count, len(made) + _MAKE_AHEAD))
            for block in source:
                made.extend(block)
                if len(made) >= want:
                    break
            if len(made) >= self._length:
                self._source = None
                del made[self._length :]

    @property
    def tokens(self) -> tuple[str, ...]:
        self._make(self._length)
        return tuple(self._made)

    @property
    def text(self) -> str:
        self._make(self._length)
        return "".join(self._made)

    def __len__(self) -> int:
        return self._length

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Text) and self.tokens == other.tokens

    def __hash__(self) -> int:
        return hash(self.tokens)

    def __repr__(self) -> str:
        return f"Text({self.tokens!r})"

    def piece(self, lo: int, hi: int) -> str:
        """The text of tokens ``lo`` to ``hi`` (exclusive); one token without a join, as streams mostly ask."""
        made = self._made
        if hi > len(made):
            self._make(hi)
        if hi == lo + 1 and lo < len(made):
            return made[lo]
        return "".join(made[lo:hi])

    def pieces(self, lo: int, hi: int, per_chunk: int = 1) -> list[str]:
        """:meth:`piece` of each chunk of ``per_chunk`` tokens from ``lo`` to ``hi`` (the last maybe shorter)."""
        made = self._made
        if hi > len(made):
            self._make(hi)
        if per_chunk == 1:
            return made[lo:hi]
        return ["".join(made[k : min(k + per_chunk, hi)]) for k in range(lo, hi, per_chunk)]

    def cut(self, limit: int) -> Text:
        if limit >= self._length:
            return self
        if self._source is None or len(self._made) >= limit:
            return Text(self._made[:limit])
        return Text(source=self._blocks(), length=max(0, limit))

    def after(self, opening: Sequence[str]) -> Text:
        """``opening``'s tokens, then this text's: as lazy as this text (nothing of it is made now)."""
        if self._source is None:
            return Text((*opening, *self._made))
        return Text(source=self._blocks(list(opening)), length=len(opening) + self._length)

    def _blocks(self, opening: list[str] | None = None) -> Iterator[list[str]]:
        """This text's tokens, as they are made (after ``opening``'s, if given): the source of a lazy
        cut of it, or of :meth:`after`."""
        if opening:
            yield opening
        given = 0
        while given < self._length:
            self._make(given + 1)
            yield self._made[given:]
            given = len(self._made)

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
        from faker import Faker  # on the first answer written, not at import: it takes longer than the rest

        _FAKERS[locale] = Faker(locale)
    return _FAKERS[locale]


class TextGenerator:
    """Makes token sequences of an exact length from a seed."""

    def warm(self) -> None:
        """Build the English generator, load the o200k encoding and split Faker's English words
        into its tokens now rather than on the first answer (a server builds them on first use: the
        encoding takes about 0.3 s, the words about 12 ms, once per process)."""
        with _FAKER_LOCK:
            _faker("en")
        tokens.warm()
        _spelled_words("en")

    def generate(
        self, seed: int, length: int, language: str = "en", *, tokens_per_character: float | None = None
    ) -> Text:
        """Exactly ``length`` tokens of prose: Faker's words, in sentences of 6 to 14 words.

        English tokens are o200k_base's (:func:`tokens.word_pieces`, word by word, cached), so
        re-counting the text with tiktoken gives ``length``. English text is lazy (see
        :class:`Text`): its words are drawn as a stream reads them, the same words Faker seeded
        with ``seed`` would give in one call, so planning a long reply costs microseconds.
        Chinese follows the output token model of :func:`_chinese`, ``tokens_per_character``
        tokens per character on average.
        """
        if length <= 0:
            return Text(())
        if language == "zh" or length == 1:  # Faker draws a single word differently (random.choice)
            with _FAKER_LOCK:
                fake = _faker(language)
                fake.seed_instance(seed)
                # Every word gives at least one token, so length words are always enough.
                words = fake.words(nb=length)
            if language == "zh":
                ratio = tokens_per_character if tokens_per_character is not None else DEFAULT_ZH_TOKENS_PER_CHARACTER
                return Text(tuple(_chinese(words, length, random.Random(seed), ratio)))
            return Text(_english(map(_spelled, words), length, random.Random(seed)))
        # English is lazy (see Text): the words are drawn as a stream reads them.
        return Text(source=_english_blocks(language, seed, length), length=length)


def _english_blocks(language: str, seed: int, length: int) -> Iterator[list[str]]:
    """:func:`_english_sentences` of ``length`` tokens of Faker's words drawn with ``seed``. Its two
    seeded generators (about 4 µs each to seed) are made when the first token is read, not when the
    reply is planned: a stream's first token is due a time to first token later."""
    words_drawn = _word_draw(language, random.Random(seed), length)
    yield from _english_sentences(words_drawn, length, random.Random(seed))


# Words drawn for a reply's first sentences, all its first token needs: that token makes the first
# _MAKE_AHEAD tokens, which take 34 words (at most 42 in 2,000 seeds). More would be drawn on the first
# token's path for nothing yet: 150 streams starting together each wait for the others' first tokens.
_FIRST_WORDS = 48
_MORE_WORDS = 128  # words drawn each time after that


def _word_draw(language: str, rng: random.Random, total: int) -> Iterator[Spelled]:
    """``total`` of Faker's words for ``language``, drawn from ``rng`` in blocks: the same words
    as one ``words(nb=total)`` call with Faker seeded alike (for ``total`` > 1), since
    ``random.choices`` takes one ``random()`` per word and only indexes the population. Each
    comes already split into o200k tokens (:func:`_spelled_words`). The blocks are chained in C:
    a word is read without resuming a generator."""
    return itertools.chain.from_iterable(_word_blocks(language, rng, total))


def _word_blocks(language: str, rng: random.Random, total: int) -> Iterator[list[Spelled]]:
    """:func:`_word_draw`'s blocks, each drawn when the one before is used up."""
    population, weights = _spelled_words(language)
    block, drawn = _FIRST_WORDS, 0
    while drawn < total:
        count = min(block, total - drawn)
        yield rng.choices(population, cum_weights=weights, k=count)
        drawn += count
        block = _MORE_WORDS


_WORD_LISTS: dict[str, tuple[Sequence[str], list[float] | None]] = {}


def _word_list(language: str) -> tuple[Sequence[str], list[float] | None]:
    """The words Faker's ``words()`` draws from, and their cumulative weights (None: uniform)."""
    found = _WORD_LISTS.get(language)
    if found is None:
        with _FAKER_LOCK:
            fake = _faker(language)
            elements = fake.get_words_list()
            if isinstance(elements, dict):
                keys = tuple(elements.keys())
                weights = list(itertools.accumulate(elements.values())) if fake.__use_weighting__ else None
                found = (keys, weights)
            else:
                found = (elements if isinstance(elements, (tuple, list)) else tuple(elements), None)
        _WORD_LISTS[language] = found
    return found


# A word as o200k tokens, in the three ways a sentence shows it: within a sentence (" word"),
# starting one (" Word"), and starting the reply ("Word"). Splitting costs microseconds per word
# (a BPE call), so the words Faker draws from are split once per process, not once per use.
Spelled = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]
_SPELLED: dict[str, tuple[Sequence[Spelled], list[float] | None]] = {}


def _spelled(word: str) -> Spelled:
    """``word`` split into o200k tokens, as :data:`Spelled`."""
    capital = word.capitalize()
    pieces = tokens.word_pieces
    return pieces(f" {word}"), pieces(f" {capital}"), pieces(capital)


def _spelled_words(language: str) -> tuple[Sequence[Spelled], list[float] | None]:
    """:func:`_word_list` with each word :func:`_spelled` (in the same order, so draws pick the same words)."""
    found = _SPELLED.get(language)
    if found is None:
        words, weights = _word_list(language)
        found = _SPELLED[language] = (tuple(map(_spelled, words)), weights)
    return found


# Words that are one o200k token each, to fill the last tokens when the next word would overrun.
_FILLERS = (" the", " and", " of", " to", " in", " it", " is", " was")


def _english(words: Iterator[Spelled], length: int, shape: random.Random) -> list[str]:
    """Sentences of o200k tokens. A word that would overrun ``length`` is passed over, so the
    text never ends inside a word and re-counting it gives exactly ``length``."""
    return [token for sentence in _english_sentences(words, length, shape) for token in sentence]


def _english_sentences(words: Iterator[Spelled], length: int, shape: random.Random) -> Iterator[list[str]]:
    """:func:`_english`, a sentence at a time, made as they are read."""
    made = 0
    lengths = _sentence_lengths(shape)
    while made < length:
        sentence_length = next(lengths)
        room = length - made  # tokens this sentence may still take
        # Its first word capitalized; the very first word of the reply has no space before it.
        capital = 1 if made else 2
        for spelled in words:
            first = spelled[capital]
            if len(first) <= room:
                break
        else:  # every word was too long for the last tokens
            yield _filled([], made, length)
            return
        out = list(first)
        room -= len(out)
        if room:  # then words within it (a loop of its own: the per-word path of every reply)
            written = 1
            for spelled in words:
                pieces = spelled[0]
                count = len(pieces)
                if count > room:
                    continue
                out += pieces
                room -= count
                written += 1
                if written == sentence_length or not room:
                    break
            else:
                yield _filled(out, made, length)
                return
        if made + len(out) < length:
            out.append(".")
        made += len(out)
        yield out


def _sentence_lengths(shape: random.Random) -> Iterator[int]:
    """Sentence lengths of 6 to 14 words: each ``shape.randint(6, 14)``, drawn as ``randrange`` draws
    it (four bits, drawn again while over 8), without its three calls a sentence."""
    draw = shape.getrandbits
    while True:
        extra = draw(4)
        while extra > 8:
            extra = draw(4)
        yield 6 + extra


def _filled(out: list[str], made: int, length: int) -> list[str]:
    """The last sentence ``out`` (after ``made`` tokens) filled up to ``length`` tokens with one-token
    words, when every word left was too long for them."""
    fillers = [f for f in _FILLERS if len(tokens.word_pieces(f)) == 1]
    while made + len(out) < length:
        out.append(fillers[(made + len(out)) % len(fillers)])
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


class Cues:
    """What the prompt says about the answer, for any API: its language, the kind of length
    asked for (:mod:`.lengths`), and every text of the conversation (where a JSON Schema for a
    ``json_object`` answer may be described).

    Made for every request and never changed once read. The kind and the stated size of an English
    prompt are read from its decisive text (:func:`cues_of`) when first asked for: a request whose
    length is forced (``x-mock-output-tokens``) never asks, and its prompt is not searched for them.
    """

    __slots__ = ("_kind", "_size", "_unread", "language", "latest", "results", "system", "texts")

    def __init__(
        self,
        language: str,
        kind: AnswerKind = "default",
        texts: tuple[str, ...] = (),
        size: tuple[int, StatedUnit] | None = None,
        latest: str = "",
        system: tuple[str, ...] = (),
        results: tuple[str, ...] = (),
        *,
        unread: str | None = None,
    ) -> None:
        self.language = language
        self._kind = kind
        self.texts = texts
        self._size = size  # a size the prompt states: "200 words", "800字"
        self.latest = latest  # the latest user text that is not blank: where tool arguments are read
        self.system = system  # the system (and developer) prompts
        self.results = results  # the tool results after the latest user message, which the answer reports
        self._unread = unread  # the text the kind and size are still to be read from, if any

    @property
    def kind(self) -> AnswerKind:
        if self._unread is not None:
            self._read()
        return self._kind

    @property
    def size(self) -> tuple[int, StatedUnit] | None:
        if self._unread is not None:
            self._read()
        return self._size

    def _read(self) -> None:
        text = self._unread or ""
        _, self._kind, self._size = (
            _remembered_cues(text) if len(text) <= _REMEMBERED_CUES_CHARS else _cues_of_text(text)
        )
        self._unread = None

    def _fields(self) -> tuple[Any, ...]:
        return (self.language, self.kind, self.texts, self.size, self.latest, self.system, self.results)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Cues) and self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # compared by value, and never changed once read

    def __repr__(self) -> str:
        names = ("language", "kind", "texts", "size", "latest", "system", "results")
        return f"Cues({', '.join(f'{n}={v!r}' for n, v in zip(names, self._fields(), strict=True))})"


def cues_of(
    user_texts: Sequence[str],
    all_texts: Sequence[str],
    *,
    system: Sequence[str] = (),
    results: Sequence[str] = (),
) -> Cues:
    """The cues of a conversation: the latest user text decides language, kind and stated size
    (the other texts when there is no user text). A text of ASCII characters alone is English, with
    no Chinese to search for; its kind and size are read when asked for (:class:`Cues`)."""
    # Each of the three reads the latest text that is not blank, and nothing else.
    decisive = _latest_said(user_texts or all_texts)
    said = decisive if user_texts else ""
    texts, kept_system, kept_results = tuple(all_texts), tuple(filter(None, system)) if system else (), tuple(results)
    if decisive.isascii():  # most prompts
        return Cues("en", "default", texts, None, said, kept_system, kept_results, unread=decisive)
    if len(decisive) <= _REMEMBERED_CUES_CHARS:
        language, kind, size = _remembered_cues(decisive)
    else:
        language, kind, size = _cues_of_text(decisive)
    return Cues(language, kind, texts, size, said, kept_system, kept_results)


def _latest_said(texts: Sequence[str]) -> str:
    """The latest of ``texts`` that is not blank (all whitespace), or ``""``. A loop rather than a
    generator, on every request's path."""
    for index in range(len(texts) - 1, -1, -1):
        text = texts[index]
        if text and not text.isspace():  # what text.strip() finds non-empty, without a copy
            return text
    return ""


# The cues of prompts up to this long are remembered: a test run sends the same prompts again and
# again, and reading one takes a handful of regular-expression searches. At most about 4 MB of text.
_REMEMBERED_CUES_CHARS = 1_024
_REMEMBERED_CUES = 4_096


def _cues_of_text(text: str) -> tuple[str, AnswerKind, tuple[int, StatedUnit] | None]:
    """The language, kind and stated size of one text that is not blank (or of none: ``""``)."""
    if not text:
        return "en", "default", None
    kind, size = kind_and_size(cue_text(text))
    # A text of ASCII characters alone has no Chinese in it: it is not searched for any.
    return ("en" if text.isascii() or not tokens.is_chinese(text) else "zh"), kind, size


_remembered_cues = lru_cache(maxsize=_REMEMBERED_CUES)(_cues_of_text)


def apply_stop(text: Text, stop: Sequence[str]) -> tuple[Text, bool]:
    """Cut ``text`` before the first stop sequence. Returns the text and whether it was cut."""
    if not any(stop):
        return text, False  # without reading the text, which would make all of a lazy one now
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
