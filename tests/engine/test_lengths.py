"""Answer length follows the request: long for a story, short for "one word", within the limits."""

from __future__ import annotations

import re

import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockserver import MockServer
from mockserver.config.fixture import ConfigError, parse_fixture
from mockserver.engine import generation, lengths
from tests.conftest import fixture_with
from tests.support import sdk


def _kind(texts: list[str]) -> str:
    """The kind of answer a conversation of user texts asks for, as a request's cues read it."""
    return generation.cues_of(texts, texts).kind


@pytest.mark.parametrize(
    ("prompt", "kind"),
    [
        ("Write a long story about a lighthouse keeper.", "long"),
        ("Write an essay on the history of tea", "long"),
        ("Explain TCP congestion control in detail.", "long"),
        ("Give me a 1000 words article on bees", "long"),
        ("请写一个关于龙的长篇故事", "long"),
        ("详细介绍一下长城", "long"),
        ("写一篇800字的作文", "long"),
        ("Answer with one word: what colour is the sky?", "short"),
        ("Is Paris in France? yes or no", "short"),
        ("Briefly, what is DNS?", "short"),
        ("Summarise the report in one sentence.", "short"),
        ("用一句话回答：天空是什么颜色？", "short"),
        ("What is the capital of France?", "default"),
        ("你好", "default"),
        ("", "default"),
    ],
)
def test_answer_kind_reads_the_prompt(prompt: str, kind: str) -> None:
    assert _kind([prompt]) == kind


def test_the_latest_text_decides() -> None:
    assert _kind(["Write a long story", "Now answer in one word"]) == "short"
    assert _kind(["Answer in one word", "Tell me a story", ""]) == "long"


def test_natural_length_is_deterministic_and_in_range() -> None:
    drawn = [lengths.natural_length(seed, 1500, 3000) for seed in range(200)]
    assert all(1500 <= n <= 3000 for n in drawn)
    assert drawn == [lengths.natural_length(seed, 1500, 3000) for seed in range(200)]
    assert len(set(drawn)) > 100


def _chat(client: openai.OpenAI, prompt: str, **kwargs: object) -> tuple[int, str | None, str]:
    reply = client.chat.completions.create(
        model="gpt-5.6-sol", messages=[{"role": "user", "content": prompt}], **kwargs
    )
    assert reply.usage is not None
    return reply.usage.completion_tokens, reply.choices[0].finish_reason, reply.choices[0].message.content or ""


def test_long_short_and_default_answers_through_the_sdk(server: MockServer) -> None:
    client = sdk(server)
    fixture = server.state.fixture.output_tokens
    long_tokens, finish, _ = _chat(client, "Write a long story")
    assert fixture.long.min <= long_tokens <= fixture.long.max and finish == "stop"
    short_tokens, _, _ = _chat(client, "Reply with one word: hot or cold?")
    assert fixture.short.min <= short_tokens <= fixture.short.max
    default_tokens, _, _ = _chat(client, "What is the capital of France?")
    assert fixture.min <= default_tokens <= fixture.max
    assert _chat(client, "Write a long story")[0] == long_tokens  # same request, same length


def test_limits_cut_a_long_answer(server: MockServer) -> None:
    client = sdk(server)
    assert _chat(client, "Write a long story", max_completion_tokens=300)[:2] == (300, "length")
    assert _chat(client, "Write a long story", max_tokens=50)[:2] == (50, "length")
    response = client.responses.create(
        model="gpt-5.6-sol", input="Write an essay about rivers", max_output_tokens=200, reasoning={"effort": "none"}
    )
    assert response.status == "incomplete" and response.usage is not None
    assert response.usage.output_tokens == 200


def test_the_override_header_wins(server: MockServer) -> None:
    client = sdk(server, default_headers={"x-mock-output-tokens": "7"})
    assert _chat(client, "Write a long story")[0] == 7
    response = client.responses.create(model="gpt-5.6-sol", input="Write a long story", reasoning={"effort": "none"})
    assert response.usage is not None and response.usage.output_tokens == 7


def test_the_fixture_sets_each_range() -> None:
    fixture = fixture_with(
        output_tokens={"min": 5, "max": 5, "long": {"min": 70, "max": 70}, "short": {"min": 2, "max": 2}}
    )
    with MockServer(fixture=fixture, time_scale=0) as server:
        client = sdk(server)
        assert _chat(client, "Write a story")[0] == 70
        assert _chat(client, "yes or no: is water wet?")[0] == 2
        assert _chat(client, "hello")[0] == 5


def test_a_reversed_range_is_refused() -> None:
    data = fixture_with().model_dump()
    data["output_tokens"]["long"] = {"min": 10, "max": 5}
    with pytest.raises(ConfigError, match=r"output_tokens\.long: min \(10\) must not exceed max \(5\)"):
        parse_fixture(data)


@pytest.mark.parametrize(
    ("prompt", "size"),
    [
        ("Write a 200 word essay", (200, "words")),
        ("Explain it in 1,000 words.", (1000, "words")),
        ("Answer in about 50 tokens", (50, "tokens")),
        ("写一篇800字的文章", (800, "zh_characters")),
        ("Write a story with 3 characters", None),
        ("Write a long story", None),
    ],
)
def test_a_stated_size_is_read(prompt: str, size: tuple[int, str] | None) -> None:
    assert generation.cues_of([prompt], [prompt]).size == size


def test_a_stated_size_sets_the_length(server: MockServer) -> None:
    client = sdk(server)
    words, _, _ = _chat(client, "Write a 300 word essay about tea")
    assert 360 <= words <= 440  # 300 words at 4/3 tokens each, within 10%
    chinese, _, text = _chat(client, "写一篇500字的文章")
    assert 450 <= len(text) <= 550 and chinese == pytest.approx(len(text) * 1.36, abs=2)
    assert _chat(client, "Write 100000 words")[0] == server.state.fixture.output_tokens.longest


# The cue patterns as phrases, one alternative each: lengths.py groups them by first letter, which
# is faster to search; these say what they mean, and the test below checks the two agree.
_LONG_PHRASES = re.compile(
    r"\b(?:stor(?:y|ies)|essays?|articles?|reports?|chapters?|novel(?:la)?s?|novels?|fairy ?tales?|tales?|"
    r"blog posts?|long|lengthy|in (?:great |full )?detail|detailed|at length|thorough(?:ly)?|comprehensive|"
    r"in depth|in-depth|elaborate|\d[\d,]*\s*(?:words|paragraphs|pages))\b"
    r"|故事|文章|报告|论文|小说|长篇|详细|详尽|深入|\d+\s*字",
    re.IGNORECASE,
)
_SHORT_PHRASES = re.compile(
    r"\b(?:one|single|1)[ -]word|\byes or no\b|\byes/no\b|\bbriefly\b|\bbrief(?:ly)? answer\b|\bbe brief\b|"
    r"\bin (?:one|a single|1) (?:sentence|line|word)\b|\bone[- ]liner?\b|\bshort answer\b|\bkeep it short\b|"
    r"\bbe concise\b|\bconcisely\b|\btl;?dr\b|\bjust the (?:number|name|answer)\b|\bonly the (?:number|name|answer)\b"
    r"|一个词|一个字|简短|简要|简单回答|一句话|是或否|是还是否|只回答",
    re.IGNORECASE,
)
_STATED_AS_WRITTEN = re.compile(
    r"(?<![\d.])(\d{1,3}(?:,\d{3})+|\d{1,7})\s*(?:-\s*)?"
    r"(?:(?P<words>words?\b)|(?P<tokens>tokens?\b)|(?P<zh>个?字|个汉字))",
    re.IGNORECASE,
)
# Pieces of every phrase, and what sits around them, so that random texts often come near a match.
_PIECES = [
    "one", "single", "1", "word", "yes", "or", "no", "/", "briefly", "brief", "answer", "be", "in", "a", "sentence",
    "line", "liner", "short", "keep", "it", "concise", "concisely", "tl;dr", "tldr", "just", "the", "number", "name",
    "only", "story", "stories", "essay", "article", "report", "chapter", "novella", "novels", "novel", "fairy", "tale",
    "tales", "blog", "post", "long", "lengthy", "great", "full", "detail", "detailed", "at", "length", "thorough",
    "thoroughly", "comprehensive", "depth", "in-depth", "elaborate", "1,000", "12", "words", "paragraphs", "pages",
    "一个词", "一个字", "简短", "简要", "简单回答", "一句话", "是或否", "是还是否", "只回答", "故事", "文章", "报告",
    "论文", "小说", "长篇", "详细", "详尽", "深入", "800", "字",
    "keep it short", "yes or no", "be brief", "in one sentence", "in a single line", "just the number",
    "short answer", "only the name", "at length", "in great detail", "in full detail", "blog post", "in depth",
    "s", "ly", "x", "_", "ONE", "Brief", "STORY", "ſ", "K", "é",
    "0", "7", "42", "1,000", ",000", "12345678", "3.5", ".", "v2", "٣", "word", "tokens", "Words", "个字", "个汉字",
]  # fmt: skip
_BETWEEN = [" ", " ", " ", "", "", "  ", "-", ", ", ". ", "\n", "_"]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_PIECES), st.sampled_from(_BETWEEN)), max_size=12))
def test_the_grouped_cue_patterns_match_the_same_texts_as_the_phrases(pieces: list[tuple[str, str]]) -> None:
    text = "".join(piece + between for piece, between in pieces)
    assert (lengths._SHORT.search(text) is None) == (_SHORT_PHRASES.search(text) is None), text
    assert (lengths._LONG.search(text) is None) == (_LONG_PHRASES.search(text) is None), text
    stated, written = lengths._STATED.search(text), _STATED_AS_WRITTEN.search(text)
    assert (stated and (stated.span(), stated.groups())) == (written and (written.span(), written.groups())), text


def _kind_by_the_patterns(text: str) -> str:
    return "short" if lengths._SHORT.search(text) else "long" if lengths._LONG.search(text) else "default"


def _size_by_the_pattern(text: str) -> tuple[int, str] | None:
    match = lengths._STATED.search(text)
    if match is None or int(match.group(1).replace(",", "")) == 0:
        return None
    unit = "words" if match["words"] else "tokens" if match["tokens"] else "zh_characters"
    return int(match.group(1).replace(",", "")), unit


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_PIECES), st.sampled_from(_BETWEEN)), max_size=12))
def test_the_words_looked_for_first_pass_over_no_text_the_patterns_match(pieces: list[tuple[str, str]]) -> None:
    """kind_of and size_of search a text of ASCII characters only if it holds one of the words every
    phrase has: they find what the patterns alone find, in any case."""
    text = "".join(piece + between for piece, between in pieces)
    for variant in (text, text.upper(), text.title(), text.swapcase()):
        assert lengths.kind_of(variant) == _kind_by_the_patterns(variant), variant
        assert lengths.size_of(variant) == _size_by_the_pattern(variant), variant
        assert lengths.kind_and_size(variant) == (lengths.kind_of(variant), lengths.size_of(variant)), variant


@pytest.mark.parametrize(
    "text",
    ["Be Brief", "ONE-LINER", "TL;DR", "tldr", "Only The Answer", "JUST THE NUMBER", "In Depth", "Blog Posts",
     "elaborate", "Comprehensive", "FAIRYTALE", "Thoroughly", "Lengthy", "10 PAGES", "3 Paragraphs", "50 TOKENS",
     "At Length", "Yes/No", "Concisely", "keep it SHORT", "a Single-Word", "in 1 line", "Novellas", "Chapters"],
)  # fmt: skip
def test_every_phrase_is_found_in_any_case(text: str) -> None:
    assert lengths.kind_of(text) == _kind_by_the_patterns(text) != "default" or lengths.size_of(text) is not None


@pytest.mark.parametrize("text", ["Keep it short.", "TL;DR please", "one-liner", "in a single line", "be concise"])
def test_every_short_phrase_is_still_a_short_cue(text: str) -> None:
    assert _kind([text]) == "short" and _SHORT_PHRASES.search(text) is not None


@pytest.mark.parametrize(
    "text",
    ["write 200 words", "1,000 words", "v1.5 words", "3.200 words", "x200words", "1,00 words", "12345678 words",
     "about 500-tokens", "写800字", "写 800 个汉字", "0 words", "٣٠ words", ".5 words", "5.words", "2,000,000 tokens"],
)  # fmt: skip
def test_the_stated_size_pattern_finds_what_it_finds_as_written(text: str) -> None:
    stated, written = lengths._STATED.search(text), _STATED_AS_WRITTEN.search(text)
    assert (stated and (stated.span(), stated.groups())) == (written and (written.span(), written.groups()))
