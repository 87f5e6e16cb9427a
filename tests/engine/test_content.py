"""Tokens and generated text: exact counts, determinism, language, stop sequences."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from mockserver.engine import generation, tokens
from mockserver.engine.generation import Text, TextGenerator


@settings(deadline=None)
@given(st.text())
def test_split_round_trips_any_text(text: str) -> None:
    assert "".join(tokens.split(text)) == text


def test_split_gives_o200k_tokens_with_fragments_of_characters_empty() -> None:
    assert tokens.split("Hello, world!") == ["Hello", ",", " world", "!"]
    assert tokens.split("你好。") == ["你好", "。"]
    assert tokens.split("🦜") == ["", "", "🦜"]  # three tokens: the first two are only parts of its bytes


def test_prompt_count_includes_message_framing() -> None:
    # 3 to prime the reply, 3 of framing per message, its role, its text, and 1 more with a name.
    assert tokens.count_messages([tokens.PromptMessage("user", "Hello world")]) == 3 + 3 + 1 + 2
    assert tokens.count_messages([tokens.PromptMessage("user", "Hello world", name="ann")]) == 3 + 3 + 1 + 2 + 1 + 1


def test_generation_is_exact_and_deterministic() -> None:
    generator = TextGenerator()
    first = generator.generate(seed=5, length=37)
    assert len(first) == 37
    assert tokens.split(first.text)[:36] == list(first.tokens[:36])
    assert generator.generate(seed=5, length=37) == first
    assert generator.generate(seed=6, length=37) != first


def test_chinese_generation() -> None:
    text = TextGenerator().generate(seed=1, length=136, language="zh").text
    assert len(text) == 100  # the output token model: 1.36 tokens per character
    assert sum("\u4e00" <= ch <= "\u9fff" for ch in text) >= 85


def test_language_follows_the_latest_text() -> None:
    texts = ["hello", "请写一篇文章"]
    assert generation.cues_of(texts, texts).language == "zh"
    texts = ["请写", "now in English please"]
    assert generation.cues_of(texts, texts).language == "en"


def test_request_seed_prefers_the_explicit_seed_and_hashes_otherwise() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
    assert generation.request_seed(body, 0, explicit=9) == 9
    assert generation.request_seed(body, 0) == generation.request_seed(dict(body), 0)
    assert generation.request_seed(body, 0) != generation.request_seed(body, 1)


def test_stop_cuts_before_the_sequence_even_inside_a_token() -> None:
    text = Text(("Hello", " wor", "ld", "!"))
    cut, stopped = generation.apply_stop(text, ["orl"])
    assert stopped and cut.text == "Hello w"
    assert generation.apply_stop(text, ["zzz"]) == (text, False)


def test_a_text_after_an_opening_is_lazy_and_the_same_as_made_at_once() -> None:
    opening = tokens.split("The tool returned 42.")
    for length in (1, 7, 40, 1_500):
        rest = TextGenerator().generate(9, length)
        joined = rest.after(opening)
        assert len(joined) == len(opening) + length
        if length > 1:  # a generated English text of more than a token is lazy: nothing made yet
            assert joined._source is not None and not rest._made
        expected = (*opening, *TextGenerator().generate(9, length).tokens)
        assert joined.piece(0, len(opening) + 3) == "".join(expected[: len(opening) + 3])
        assert joined.tokens == expected
    assert Text(["a", "b"]).after(["x"]).tokens == ("x", "a", "b")
    assert Text(["a"]).after([]).tokens == ("a",)


@given(st.integers(min_value=0, max_value=2**64))
def test_sentence_lengths_are_the_draws_of_randint_6_14_for_the_same_seed(seed: int) -> None:
    """A reply's sentence lengths are ``randint(6, 14)`` on a generator seeded with the reply's seed, as
    they always were: the same seed keeps giving the same text."""
    lengths = generation._sentence_lengths(random.Random(seed))
    reference = random.Random(seed)
    assert [next(lengths) for _ in range(40)] == [reference.randint(6, 14) for _ in range(40)]
