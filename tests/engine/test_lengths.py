"""Answer length follows the request: long for a story, short for "one word", within the limits."""

from __future__ import annotations

import openai
import pytest

from mockserver import MockServer
from mockserver.config.fixture import ConfigError, parse_fixture
from mockserver.engine import lengths
from tests.conftest import fixture_with
from tests.support import sdk


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
    assert lengths.answer_kind([prompt]) == kind


def test_the_latest_text_decides() -> None:
    assert lengths.answer_kind(["Write a long story", "Now answer in one word"]) == "short"
    assert lengths.answer_kind(["Answer in one word", "Tell me a story", ""]) == "long"


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
    assert lengths.stated_size([prompt]) == size


def test_a_stated_size_sets_the_length(server: MockServer) -> None:
    client = sdk(server)
    words, _, _ = _chat(client, "Write a 300 word essay about tea")
    assert 360 <= words <= 440  # 300 words at 4/3 tokens each, within 10%
    chinese, _, text = _chat(client, "写一篇500字的文章")
    assert 450 <= len(text) <= 550 and chinese == pytest.approx(len(text) * 1.36, abs=2)
    assert _chat(client, "Write 100000 words")[0] == server.state.fixture.output_tokens.longest
