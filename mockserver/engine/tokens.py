"""Token splitting and counting with OpenAI's o200k_base encoding, offline.

The encoder is tiktoken's, built from the vocabulary mockserver ships
(:mod:`mockserver.engine.vocabularies`), so nothing is downloaded at run time, and counts are
``tiktoken.get_encoding("o200k_base")``'s (tests/engine/test_tokens.py checks it). It is built on
first use, not at import or start-up: a server that answers no request that counts tokens, or a
test session that makes none, never pays for it (about 0.3 s and 80 MiB; docs/tokens.md).

Prompt tokens follow OpenAI's published recipe for chat models: 3 tokens of framing per
message, plus its role, its text and (with 1 more) its ``name``, and 3 to prime the reply.

When ``tiktoken`` is not installed, a documented estimate takes its place (:func:`exact`
is then false): one token per word with its leading space, per punctuation mark and per CJK
character, within about 10-20% of o200k for English. docs/tokens.md has the figures.

:func:`split` cuts text into o200k tokens whose concatenation is the text. A token that is only
part of a character's UTF-8 bytes (common in Chinese) carries no text: its piece is ``""`` and
the token that completes the character carries it, which is how the live API streams them.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from mockserver.config.patterns import deferred_re

TOKENS_PER_MESSAGE = 3  # <|im_start|>, <|im_sep|> (after the role) and <|im_end|>
TOKENS_PER_NAME = 1
TOKENS_PER_REPLY = 3  # <|im_start|>assistant<|im_sep|>, which primes the answer
ENCODING = "o200k_base"

# Longer texts are counted in pieces cut where o200k's pre-tokenizer cuts too (before a space that
# starts a word), so that no one call holds the encoder for long.
_PIECE_CHARS = 100_000


@dataclass(slots=True)
class PromptMessage:
    """One message as the prompt count sees it (made for every message and only read: not frozen, as a
    frozen dataclass sets each field through ``object.__setattr__``, several times the cost to make)."""

    role: str
    text: str
    name: str | None = None


# -- The encoding, loaded once per process ------------------------------------------------------

_LOCK = threading.Lock()
_LOADED: dict[str, Any] = {}


def load_encoding(name: str) -> Any | None:
    """The ``tiktoken`` encoding ``name`` (``o200k_base``, ``cl100k_base``), built from the shipped
    vocabulary, or ``None`` without ``tiktoken``. Built once per process, on first use."""
    if name not in _LOADED:
        with _LOCK:
            if name not in _LOADED:
                _LOADED[name] = _built(name)
    return _LOADED[name]


def _built(name: str) -> Any | None:
    try:
        import tiktoken
    except ImportError:
        return None
    from mockserver.engine import vocabularies

    vocabulary = vocabularies.VOCABULARIES[name]
    return tiktoken.Encoding(
        name,
        pat_str=vocabulary.pattern,
        mergeable_ranks=vocabularies.ranks(name),
        special_tokens=vocabulary.special_tokens,
    )


def _encoding() -> Any | None:
    """The o200k_base encoding, or ``None`` without ``tiktoken``."""
    return load_encoding(ENCODING)


def warm() -> None:
    """Build the encoding now rather than on first use."""
    _encoding()


def exact() -> bool:
    """Whether counts are o200k_base's own (``tiktoken`` installed) rather than the estimate."""
    return _encoding() is not None


# -- Counting and splitting ---------------------------------------------------------------------


# Texts up to this long have their counts remembered (:func:`_count_remembered`): the roles, names and
# system prompts that every request of a test run repeats, and a conversation's earlier turns, which
# each later request sends again. At most this many counts are kept, so at most about 4 MB of text.
REMEMBERED_CHARS = 1_024
_REMEMBERED_COUNTS = 4_096


# Counts of this request's long texts (and of every text of a prompt too long to count at once, whose
# many short messages would overflow the remembered counts), made once by
# :mod:`mockserver.engine.prompt_count` before the reply is planned: the reply's usage then looks them
# up instead of counting them again. One request's own (a context variable: each request's task has
# its own), so nothing outlives it.
_COUNTED: ContextVar[Mapping[str, int] | None] = ContextVar("counted_texts", default=None)


def remember(counted: Mapping[str, int]) -> None:
    """Let :func:`count` answer these texts' counts for the rest of the current request."""
    _COUNTED.set(counted)


def count(text: str) -> int:
    """Tokens in ``text``: o200k_base's count, or the estimate without ``tiktoken``."""
    if not text:
        return 0
    counted = _COUNTED.get()
    if counted is not None:
        known = counted.get(text)
        if known is not None:
            return known
    if len(text) <= REMEMBERED_CHARS:
        return _count_remembered(text)
    return _count(text)


@lru_cache(maxsize=_REMEMBERED_COUNTS)
def _count_remembered(text: str) -> int:
    """:func:`_count`, remembered: each message is counted twice per request (its rate-limit cost,
    then its usage), and most prompt texts recur across requests."""
    return _count(text)


def _count(text: str) -> int:
    encoding = _encoding()
    if encoding is None:
        return len(_ESTIMATE.findall(text))
    if len(text) <= _PIECE_CHARS:  # one piece (see _pieces_of): most texts, so without the generators
        return len(encoding.encode_ordinary(text))
    return sum(len(encoding.encode_ordinary(piece)) for piece in _pieces_of(text))


def split(text: str) -> list[str]:
    """``text`` as tokens whose concatenation is ``text``; ``""`` for a partial character."""
    if not text:
        return []
    encoding = _encoding()
    if encoding is None:
        return _ESTIMATE.findall(text)
    out: list[str] = []
    for piece in _pieces_of(text):
        out.extend(_readable(encoding.decode_tokens_bytes(encoding.encode_ordinary(piece))))
    return out


@lru_cache(maxsize=16_384)
def word_pieces(word: str) -> tuple[str, ...]:
    """:func:`split` of one word (with its leading space), cached: generated prose reuses a few
    thousand words, and o200k never merges across the start of a word, so splitting word by word
    gives the tokens of the whole text."""
    return tuple(split(word))


def count_messages(messages: Iterable[PromptMessage | str]) -> int:
    """Prompt tokens of a conversation, framing included. A bare string is a message whose
    role is one token, as ``user``, ``system``, ``assistant`` and ``developer`` each are."""
    total = TOKENS_PER_REPLY
    for message in messages:
        if isinstance(message, str):
            total += TOKENS_PER_MESSAGE + 1 + count(message)
        else:
            total += framing_tokens(message) + count(message.text)
    return total


def framing_tokens(message: PromptMessage) -> int:
    """A message's tokens in :func:`count_messages` besides its text: its framing, role and name
    (the texts and framing :func:`message_parts` gives, but the message's text)."""
    role = message.role  # short (a role), so its count is remembered; a long one is counted as a text
    tokens = _count_remembered(role) if len(role) <= REMEMBERED_CHARS else count(role)
    if message.name:
        return TOKENS_PER_MESSAGE + tokens + TOKENS_PER_NAME + count(message.name)
    return TOKENS_PER_MESSAGE + tokens


def message_parts(message: PromptMessage | str) -> list[tuple[str, int]]:
    """The texts :func:`count_messages` counts for one message, each with the framing tokens that come
    with it: its role (with the message's framing), its text, and its name (with one more). Counting
    each text and adding its framing gives the message's share of :func:`count_messages`; the prompt
    counted in pieces (:mod:`mockserver.engine.prompt_count`) reads a message so."""
    if isinstance(message, str):
        return [(message, TOKENS_PER_MESSAGE + 1)]  # a bare text's role is one token
    parts = [(message.role, TOKENS_PER_MESSAGE), (message.text, 0)]
    if message.name:
        parts.append((message.name, TOKENS_PER_NAME))
    return parts


def _readable(token_bytes: list[bytes]) -> list[str]:
    """Each token's text; a token ending inside a character gives ``""`` and passes its bytes on."""
    out: list[str] = []
    pending = b""
    for chunk in token_bytes:
        pending += chunk
        try:
            out.append(pending.decode("utf-8"))
            pending = b""
        except UnicodeDecodeError:
            out.append("")
    if pending:  # unreachable for valid text: the last token always completes its character
        out[-1] = pending.decode("utf-8", errors="replace")
    return out


_WORD_START = deferred_re(r"\S (?=\w)")  # matched one character before the space


def _pieces_of(text: str, size: int = _PIECE_CHARS) -> Iterable[str]:
    """``text`` in pieces of at most ``size`` characters, cut before a space that starts a word
    (so the pieces' counts add up to the text's)."""
    start, end = 0, len(text)
    while end - start > size:
        at = _last_word_start(text, start + size // 2, start + size)
        yield text[start:at]
        start = at
    yield text[start:] if start else text


def _last_word_start(text: str, low: int, high: int) -> int:
    """The last space in ``text[low:high]`` after a non-space and before a word character; ``high`` if none.
    (Searched from the end: a piece's last cut is near its end, so this looks at a few characters.)"""
    at = text.rfind(" ", low, high)
    while at > low:
        if _WORD_START.match(text, at - 1) is not None:
            return at
        at = text.rfind(" ", low, at)
    return high


def pieces(text: str, size: int) -> Iterable[str]:
    """``text`` in pieces of at most ``size`` characters whose counts add up to ``count(text)``."""
    return _pieces_of(text, size)


# -- The estimate, when tiktoken is missing ---------------------------------------------------

# Every character falls into exactly one alternative, so "".join(findall(t)) == t.
_ESTIMATE = deferred_re(
    r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]"  # one CJK character or full-width mark
    r"|\s*[^\W_]+"  # a word (letters and digits) with its leading space
    r"|\s*[^\w\s]"  # one punctuation mark
    r"|\s*_+"
    r"|\s+"
)
_CJK = deferred_re(r"[\u3400-\u4dbf\u4e00-\u9fff]")


def is_chinese(text: str) -> bool:
    """Whether the text is mostly written in Chinese characters."""
    cjk = len(_CJK.findall(text))
    return cjk > 0 and cjk * 2 >= len(text.replace(" ", "")) * 0.5
