"""The ``cl100k_base`` encoding, offline: how OpenAI counts the input of ``text-embedding-3`` models.

tiktoken maps every embedding model to ``cl100k_base`` (``tiktoken.encoding_for_model``), and
mockserver ships that vocabulary (:mod:`.vocabularies`: the same file, by SHA-256, as the one
tiktoken downloads), so ``usage.prompt_tokens`` of an embeddings reply equals what a client counts
with tiktoken, and nothing is fetched at run time. Chat prompts are counted with o200k_base
(:mod:`.tokens`).

Counting is bounded: :func:`count_up_to` stops once a text has passed a limit, so a text far past
the 8,192 tokens one embedding input may hold costs no more than counting that much. Without
``tiktoken``, the estimate of :mod:`.tokens` stands in (:func:`exact` is then false) and token
arrays cannot be read back into text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from mockserver.engine import tokens

ENCODING = "cl100k_base"
# Token ids of cl100k_base: 0 to 100255 are its vocabulary; 100257 and up are special tokens
# (<|endoftext|> and the fill-in-the-middle markers), which no text encodes to.
VOCABULARY_SIZE = 100_256

# A longer text is counted in pieces cut where cl100k's pre-tokenizer cuts too (before a space that
# starts a word), so that counting stops soon after a limit is passed.
_PIECE_CHARS = 20_000
_WORD_START = re.compile(r"(?<=\S) (?=\w)")


def _encoding() -> Any | None:
    """The cl100k_base encoding, or ``None`` without ``tiktoken``. Built once per process, on first use."""
    return tokens.load_encoding(ENCODING)


def warm() -> None:
    """Load the encoding now rather than on the first embeddings request."""
    _encoding()


def exact() -> bool:
    """Whether counts are cl100k_base's own (``tiktoken`` installed) rather than the estimate."""
    return _encoding() is not None


def count_up_to(text: str, limit: int) -> int:
    """Tokens in ``text``, counting no further than the first piece that passes ``limit``.

    The result is exact when it is at most ``limit``; past it, it is some number above ``limit``.
    """
    encoding = _encoding()
    total = 0
    for piece in _pieces_of(text):
        total += len(encoding.encode_ordinary(piece)) if encoding is not None else tokens.count(piece)
        if total > limit:
            break
    return total


def count(text: str) -> int:
    """Tokens in ``text``, exactly (no limit)."""
    return count_up_to(text, len(text) + 1)


def valid_token(value: object) -> bool:
    """Whether ``value`` is a token id of cl100k_base's vocabulary."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < VOCABULARY_SIZE


def decode(token_ids: Sequence[int]) -> str:
    """The text that ``token_ids`` (each :func:`valid_token`) stand for; bytes that are not whole
    UTF-8 characters become U+FFFD, as tiktoken's ``decode`` makes them. Without ``tiktoken``,
    the ids themselves, as words: the same ids still give the same text."""
    encoding = _encoding()
    if encoding is None:
        return " ".join(str(t) for t in token_ids)
    raw: bytes = encoding.decode_bytes(list(token_ids))
    return raw.decode("utf-8", errors="replace")


def _pieces_of(text: str) -> Iterator[str]:
    while len(text) > _PIECE_CHARS:
        window = text[: _PIECE_CHARS + 1]
        cuts = [m.start() for m in _WORD_START.finditer(window, _PIECE_CHARS // 2)]
        at = cuts[-1] if cuts else _PIECE_CHARS
        yield text[:at]
        text = text[at:]
    if text:
        yield text
