"""cl100k_base counts as tiktoken counts, offline, and token arrays read back into their text."""

from __future__ import annotations

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from mockserver.engine import cl100k
from tests.support import tiktoken_reference

TEXTS = [
    "The quick brown fox jumps over the lazy dog.",
    "请写一篇关于长城历史的详细文章。",
    "def f(x):\n    return x ** 2  # square",
    "naïve café résumé 🤖 1234567 https://example.com/a?b=c",
]


@pytest.fixture(scope="module")
def tiktoken_cl100k(tmp_path_factory: pytest.TempPathFactory) -> tiktoken.Encoding:
    """``tiktoken.get_encoding("cl100k_base")``, reading mockserver's copy of the file tiktoken would download."""
    return tiktoken_reference("cl100k_base", tmp_path_factory)


def test_counts_equal_tiktoken(tiktoken_cl100k: tiktoken.Encoding) -> None:
    for text in TEXTS:
        assert cl100k.count(text) == len(tiktoken_cl100k.encode_ordinary(text)), text


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300))
def test_any_text_counts_as_tiktoken_does(tiktoken_cl100k: tiktoken.Encoding, text: str) -> None:
    assert cl100k.count(text) == len(tiktoken_cl100k.encode_ordinary(text))


def test_a_long_text_is_counted_in_pieces_exactly(tiktoken_cl100k: tiktoken.Encoding) -> None:
    text = " ".join(TEXTS) * 400  # about 60,000 characters: three pieces
    assert cl100k.count(text) == len(tiktoken_cl100k.encode_ordinary(text))


def test_counting_stops_soon_after_the_limit() -> None:
    text = "word " * 2_000_000  # ten million characters
    counted = cl100k.count_up_to(text, 8_192)
    assert 8_192 < counted < 8_192 + 20_000  # one piece past the limit, not the whole text


def test_token_arrays_read_back_into_their_text(tiktoken_cl100k: tiktoken.Encoding) -> None:
    for text in TEXTS:
        assert cl100k.decode(tiktoken_cl100k.encode_ordinary(text)) == text


def test_only_vocabulary_ids_are_tokens() -> None:
    assert cl100k.valid_token(0) and cl100k.valid_token(100_255)
    assert not any(cl100k.valid_token(v) for v in (-1, 100_256, 100_257, True, 1.0, "1"))
