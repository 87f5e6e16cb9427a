"""Token counts are o200k_base's, as tiktoken gives them, offline; output usage counts what was sent.

The reference is ``tiktoken.get_encoding("o200k_base")`` itself, with tiktoken's own pattern,
reading the vocabulary mockserver ships (its SHA-256 is the one tiktoken pins for the file it would
otherwise download), so a client that pre-counts with it sees the same numbers.
"""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Iterator

import openai
import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from mockserver import MockServer
from mockserver.engine import tokens
from mockserver.engine.generation import TextGenerator
from tests.support import sdk, tiktoken_reference

PROMPTS = [
    "Write a long story about a lighthouse keeper who finds a message in a bottle.",
    "What's the capital of France? Answer in one word.",
    "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n\n# explain this   code",
    "请写一篇关于长城历史的详细文章，至少一千字。",
    "你好！今天北京的天气怎么样？",
    "Translate 「我爱机器学习」 into English, then explain why 🤖 emoji are popular in 2025.",
    "Mixed: naïve café résumé, 东京 and 서울, numbers 1234567 and 3.14159, URL https://example.com/a?b=c",
]


@pytest.fixture(scope="module")
def tiktoken_o200k(tmp_path_factory: pytest.TempPathFactory) -> tiktoken.Encoding:
    return tiktoken_reference("o200k_base", tmp_path_factory)


def cookbook_count(encoding: tiktoken.Encoding, messages: list[dict[str, str]]) -> int:
    """OpenAI cookbook's num_tokens_from_messages for gpt-4o-class models, as clients copy it."""
    total = 0
    for message in messages:
        total += 3
        for key, value in message.items():
            total += len(encoding.encode(value))
            if key == "name":
                total += 1
    return total + 3


def test_counts_equal_tiktoken(tiktoken_o200k: tiktoken.Encoding) -> None:
    assert tokens.exact()
    for prompt in PROMPTS:
        assert tokens.count(prompt) == len(tiktoken_o200k.encode_ordinary(prompt)), prompt
        assert "".join(tokens.split(prompt)) == prompt
        assert len(tokens.split(prompt)) == tokens.count(prompt)


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=200))
def test_any_text_counts_as_tiktoken_does(tiktoken_o200k: tiktoken.Encoding, text: str) -> None:
    assert tokens.count(text) == len(tiktoken_o200k.encode_ordinary(text)) == len(tokens.split(text))


def test_a_very_long_text_is_counted_in_pieces(tiktoken_o200k: tiktoken.Encoding) -> None:
    text = " ".join(f"word{i % 97}, and more." for i in range(40_000))  # ~900,000 characters
    assert tokens.count(text) == len(tiktoken_o200k.encode_ordinary(text))


def test_chat_prompt_tokens_match_the_cookbook_count(server: MockServer, tiktoken_o200k: tiktoken.Encoding) -> None:
    client = sdk(server)
    conversations: list[list[dict[str, str]]] = [[{"role": "user", "content": p}] for p in PROMPTS] + [
        [
            {"role": "system", "content": "You are a terse assistant. 回答要简短。"},
            {"role": "user", "content": "Hi, I'm Ann.", "name": "ann"},
            {"role": "assistant", "content": "Hello Ann!"},
            {"role": "user", "content": "今天星期几？ Answer briefly."},
        ]
    ]
    for messages in conversations:
        reply = client.chat.completions.create(model="gpt-5.6-sol", messages=messages, max_tokens=5)  # type: ignore[arg-type]
        assert reply.usage is not None
        assert reply.usage.prompt_tokens == cookbook_count(tiktoken_o200k, messages), messages


def test_responses_input_tokens_match_the_cookbook_count(server: MockServer, tiktoken_o200k: tiktoken.Encoding) -> None:
    client = sdk(server)
    for prompt in PROMPTS:
        expected = cookbook_count(
            tiktoken_o200k, [{"role": "system", "content": "Be kind."}, {"role": "user", "content": prompt}]
        )
        counted = client.responses.input_tokens.count(model="gpt-5.6-sol", instructions="Be kind.", input=prompt)
        created = client.responses.create(
            model="gpt-5.6-sol",
            instructions="Be kind.",
            input=prompt,
            max_output_tokens=16,
            reasoning={"effort": "none"},
        )
        assert created.usage is not None
        assert counted.input_tokens == created.usage.input_tokens == expected


def _streamed_chat(client: openai.OpenAI, prompt: str) -> tuple[list[str], int]:
    pieces, usage = [], 0
    stream = client.chat.completions.create(
        model="gpt-5.6-sol",
        messages=[{"role": "user", "content": prompt}],
        stream=True,
        stream_options={"include_usage": True},
    )
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            pieces.append(chunk.choices[0].delta.content)
        if chunk.usage is not None:
            usage = chunk.usage.completion_tokens
    return pieces, usage


def test_english_output_is_streamed_in_o200k_tokens(server: MockServer, tiktoken_o200k: tiktoken.Encoding) -> None:
    client = sdk(server)
    for prompt in ("Hello there", "Write a long story"):
        pieces, usage = _streamed_chat(client, prompt)
        text = "".join(pieces)
        assert usage == len(tiktoken_o200k.encode_ordinary(text))
    # On schedule, each content delta carries one planned token: o200k's own pieces.
    planned = TextGenerator().generate(seed=11, length=400)
    assert [tiktoken_o200k.decode([t]) for t in tiktoken_o200k.encode_ordinary(planned.text)] == list(planned.tokens)


def test_responses_output_text_recounts_to_its_usage(server: MockServer, tiktoken_o200k: tiktoken.Encoding) -> None:
    client = sdk(server)
    response = client.responses.create(model="gpt-5.6-sol", input="Write an essay", reasoning={"effort": "none"})
    assert response.usage is not None
    assert response.usage.output_tokens == len(tiktoken_o200k.encode_ordinary(response.output_text))


def test_generated_english_recounts_exactly(tiktoken_o200k: tiktoken.Encoding) -> None:
    generator = TextGenerator()
    for seed in range(40):
        for length in (1, 2, 3, 17, 160, 1500):
            text = generator.generate(seed, length).text
            assert len(tiktoken_o200k.encode_ordinary(text)) == length, (seed, length)


def test_chinese_output_follows_the_output_token_model(server: MockServer) -> None:
    client = sdk(server)
    pieces, usage = _streamed_chat(client, "请写一个很长的故事")
    characters = sum(len(p) for p in pieces)
    assert 1500 <= usage <= 3000
    assert usage / characters == pytest.approx(1.36, abs=0.01)
    response = client.responses.create(model="gpt-5.6-sol", input="写一篇文章", reasoning={"effort": "none"})
    assert response.usage is not None
    assert response.usage.output_tokens / len(response.output_text) == pytest.approx(1.36, abs=0.01)


def test_the_fixture_sets_the_chinese_token_model() -> None:
    from tests.conftest import fixture_with

    with MockServer(fixture=fixture_with(output_tokens_per_character={"zh": 2.0}), time_scale=0) as server:
        client = sdk(server, default_headers={"x-mock-output-tokens": "200"})
        pieces, usage = _streamed_chat(client, "你好")
        assert usage == 200 and sum(len(p) for p in pieces) == 100


@pytest.fixture
def without_tiktoken() -> Iterator[None]:
    saved = dict(tokens._LOADED)
    tokens._LOADED[tokens.ENCODING] = None
    tokens.word_pieces.cache_clear()
    tokens._count_remembered.cache_clear()
    try:
        yield
    finally:
        tokens._LOADED.clear()
        tokens._LOADED.update(saved)
        tokens.word_pieces.cache_clear()
        tokens._count_remembered.cache_clear()


@pytest.mark.usefixtures("without_tiktoken")
def test_the_estimate_stands_in_without_the_package() -> None:
    assert not tokens.exact()
    assert tokens.split("Hello, world!") == ["Hello", ",", " world", "!"]
    assert tokens.split("你好。") == ["你", "好", "。"]
    assert tokens.count_messages([tokens.PromptMessage("user", "one two three")]) == 3 + 3 + 1 + 3
    text = TextGenerator().generate(seed=3, length=50)
    assert len(text) == 50 and tokens.count(text.text) == 50


def test_nothing_is_fetched_at_run_time() -> None:
    """Loading the vocabulary and counting with every socket refused: all of it ships in mockserver's wheel."""
    script = (
        "import socket\n"
        "def refuse(*a: object, **k: object) -> None:\n"
        "    raise OSError('network use at run time')\n"
        "socket.socket.connect = refuse\n"
        "socket.create_connection = refuse\n"
        "socket.getaddrinfo = refuse\n"
        "from mockserver.engine import tokens\n"
        "assert tokens.exact() and tokens.count('Hello, world!') == 4\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)


def test_a_chinese_rate_in_characters_paces_tokens_by_the_token_model() -> None:
    from mockserver.config.fixture import TimingProfile

    profile = TimingProfile(tokens_per_second=750, ttft_ms=200, chinese_characters_per_second=550)
    assert profile.rate(random.Random(0), "zh", 1.36) == pytest.approx(748)  # 550 characters/s
    assert profile.rate(random.Random(0), "en", 1.36) == 750
