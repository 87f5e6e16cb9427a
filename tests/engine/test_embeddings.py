"""Embedding vectors: deterministic, unit length, closer for texts that share words, exact whatever the batch."""

from __future__ import annotations

import base64

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockserver.engine import embeddings

MODEL = "text-embedding-3-small"


def embed(text: str, dimensions: int, model: str = MODEL) -> np.ndarray:
    return embeddings.embed_many(model, [text], dimensions)[0]


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a.astype(np.float64), b.astype(np.float64)))


def test_a_vector_is_unit_length_and_the_same_every_time() -> None:
    first = embed("The lighthouse keeper found a bottle.", 1536)
    again = embed("The lighthouse keeper found a bottle.", 1536)
    assert first.dtype == np.float32 and first.shape == (1536,)
    assert np.array_equal(first, again)
    assert abs(float(np.linalg.norm(first.astype(np.float64))) - 1.0) < 1e-6


def test_texts_that_share_words_are_closer_than_unrelated_ones() -> None:
    cat, mat, revenue = embeddings.embed_many(
        MODEL, ["the cat sat on the mat", "a cat sat on a mat by the door", "quarterly revenue grew in Europe"], 1536
    )
    assert cosine(cat, mat) > 0.6
    assert abs(cosine(cat, revenue)) < 0.15 and abs(cosine(mat, revenue)) < 0.15


def test_sharing_only_common_words_counts_for_little() -> None:
    one, other = embeddings.embed_many(MODEL, ["the dog and the ball", "the tax and the law"], 1536)
    assert cosine(one, other) < 0.2


def test_word_order_and_case_matter_a_little_only() -> None:
    texts = ["red apples grow", "grow red apples", "RED APPLES GROW"]
    one, reordered, shouting = embeddings.embed_many(MODEL, texts, 1536)
    assert 0.9 < cosine(one, reordered) < 1.0 - 1e-6
    assert 0.9 < cosine(one, shouting) < 1.0 - 1e-6


def test_chinese_characters_count_as_words() -> None:
    wall, wall_history, weather = embeddings.embed_many(MODEL, ["长城很长", "长城的历史", "今天天气好"], 1536)
    assert cosine(wall, wall_history) > cosine(wall, weather) + 0.3


def test_models_give_different_vectors() -> None:
    small = embed("hello world", 1536, "text-embedding-3-small")
    large = embed("hello world", 1536, "text-embedding-3-large")
    assert abs(cosine(small, large)) < 0.15


def test_a_text_gets_the_same_bits_alone_or_among_others() -> None:
    texts = [f"document {i} about topic {i % 7} and more words {i * 3}" for i in range(300)]
    together = embeddings.embed_many(MODEL, texts, 3072)
    for i in (0, 17, 299):
        assert np.array_equal(together[i], embed(texts[i], 3072))


def test_shortened_vectors_are_the_full_one_cut_and_normalised() -> None:
    full = embed("a short note on embeddings", 1536)
    short = embed("a short note on embeddings", 256)
    assert np.allclose(embeddings.shortened(full, 256), short, atol=1e-6)
    assert abs(float(np.linalg.norm(short.astype(np.float64))) - 1.0) < 1e-6
    assert np.array_equal(embeddings.shortened(full, None), full)


def test_a_text_without_words_still_gets_a_unit_vector() -> None:
    vector = embed("?!…", 64)
    assert abs(float(np.linalg.norm(vector.astype(np.float64))) - 1.0) < 1e-6


def test_base64_is_little_endian_float32_of_the_same_values() -> None:
    vector = embed("bytes on the wire", 32)
    decoded = np.frombuffer(base64.b64decode(embeddings.as_base64(vector)), dtype="<f4")
    assert np.array_equal(decoded, vector)


def test_the_vectors_are_pinned() -> None:
    """The same text gives the same vector in every version: stored vectors stay comparable."""
    vector = embed("pinned", 4)
    assert vector.tolist() == pytest.approx(PINNED, abs=1e-7)


PINNED = [-0.31223389506340027, -0.7782362699508667, 0.42618995904922485, 0.33944135904312134]


@settings(max_examples=40, deadline=None)
@given(st.text(max_size=200), st.integers(min_value=1, max_value=64))
def test_any_text_gets_a_unit_vector_of_the_size_asked(text: str, dimensions: int) -> None:
    vector = embed(text, dimensions)
    assert vector.shape == (dimensions,)
    assert abs(float(np.linalg.norm(vector.astype(np.float64))) - 1.0) < 1e-5
