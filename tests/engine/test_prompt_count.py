"""Counting a prompt in pieces: the same count as in one go, the loop gets turns, counting stops past the
limit, and the reply's usage reuses the long texts' counts instead of counting them again."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from mockserver.engine import prompt_count, tokens
from tests.support import with_loop_turns

LONG = "Tokens are counted the way o200k counts them, 速度 and all. " * 5_000  # ~290k characters


def test_pieces_add_up_to_the_whole_count() -> None:
    whole = tokens.count_messages([LONG, "short", LONG[:1000]])
    counted = asyncio.run(prompt_count.count_messages([LONG, "short", LONG[:1000]]))
    assert counted == prompt_count.PromptCount(whole)
    assert sum(tokens.count(p) for p in tokens.pieces(LONG, 1000)) == tokens.count(LONG)
    assert "".join(tokens.pieces(LONG, 1000)) == LONG


@pytest.mark.parametrize("size", [300, 9_000, len(LONG)])  # remembered, counted at once, in pieces
def test_messages_with_roles_and_names_count_as_their_usage(size: int) -> None:
    messages = [
        tokens.PromptMessage("developer", LONG[:size]),
        tokens.PromptMessage("user", "short", "ann"),
        tokens.PromptMessage("tool", LONG[:1000], "a_long_tool_name"),
        "bare",
    ]
    counted = asyncio.run(prompt_count.count_messages(messages))
    whole = tokens.count_messages(messages)
    assert counted == prompt_count.PromptCount(whole)
    # Counted to its end when it ends just past the limit: the exact count, no estimate.
    assert asyncio.run(prompt_count.count_messages(messages, limit=whole - 1)) == counted
    assert tokens.framing_tokens(messages[1]) == tokens.TOKENS_PER_MESSAGE + 1 + tokens.TOKENS_PER_NAME + 1


def test_the_loop_gets_a_turn_between_pieces() -> None:
    _, turns = with_loop_turns(lambda: prompt_count.count_messages([LONG]))
    assert turns >= len(LONG) // prompt_count.PIECE_CHARS


def test_counting_stops_past_the_limit_and_estimates_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    huge = LONG * 20  # ~5.8 M characters
    whole = tokens.count_messages([huge])
    seen: list[int] = []
    count = tokens.count
    monkeypatch.setattr(tokens, "count", lambda text: seen.append(len(text)) or count(text))
    counted = asyncio.run(prompt_count.count_messages([huge], limit=10_000))
    assert not counted.exact
    assert sum(seen) < 10 * prompt_count.PIECE_CHARS  # about one window's worth read, not 5.8 M characters
    assert counted.tokens == pytest.approx(whole, rel=0.02)


def test_the_replys_usage_reuses_the_count() -> None:
    async def run() -> tuple[int, int]:
        counted = await prompt_count.count_messages([LONG])
        calls = 0
        original = tokens._count

        def counting(text: str) -> int:
            nonlocal calls
            calls += 1
            return original(text)

        tokens._count = counting  # type: ignore[assignment]
        try:
            again = tokens.count(LONG)
        finally:
            tokens._count = original  # type: ignore[assignment]
        assert calls == 0
        return counted.tokens, again

    counted, again = asyncio.run(run())
    assert counted == tokens.count_messages([LONG]) and again == tokens.count(LONG)


def test_a_prompt_counted_at_once_remembers_its_long_texts_for_the_request() -> None:
    long_text = "policy " * 600  # past the counts kept across requests, short of one piece
    texts = ["Be brief.", long_text]

    async def main() -> None:
        counted = await prompt_count.count_messages(texts)
        assert counted.tokens == tokens.count_messages(texts)
        remembered = tokens._COUNTED.get()
        assert remembered is not None and set(remembered) == {long_text}  # usage and the prompt cache reuse it

    asyncio.run(main())


def test_the_loop_gets_a_turn_between_many_short_texts() -> None:
    texts = [f"Line {i} of the log." for i in range(5_000)]
    counted, turns = with_loop_turns(lambda: prompt_count.count_messages(texts))
    assert counted == prompt_count.PromptCount(tokens.count_messages(texts))
    assert turns >= len(texts) // prompt_count.MESSAGES_PER_TURN


@pytest.mark.parametrize(
    "texts",
    [
        [""] * 20_000,  # under the remembered counts' size: counted at once
        ["a"] * 10_000,  # short of one piece: counted at once
        [f"Line {i} of the log." for i in range(20_000)],  # in pieces, but stopped at the first message
    ],
    ids=["remembered", "at-once", "stopped"],
)
def test_many_messages_are_read_with_the_loops_turns_before_any_counting(texts: list[str]) -> None:
    counted, turns = with_loop_turns(lambda: prompt_count.count_messages(texts, limit=10))
    whole = tokens.count_messages(texts)
    assert counted.tokens == whole or not counted.exact  # the same count, or an estimate once past the limit
    assert turns >= len(texts) // prompt_count.MESSAGES_PER_TURN // 2


def test_many_messages_counted_at_once_remember_their_long_texts() -> None:
    long_text = "policy " * 600
    messages = [tokens.PromptMessage("user", "a")] * 1_000 + [tokens.PromptMessage("user", long_text)]

    async def main() -> None:
        counted = await prompt_count.count_messages(messages)
        assert counted == prompt_count.PromptCount(tokens.count_messages(messages))
        remembered = tokens._COUNTED.get()
        assert remembered is not None and set(remembered) == {long_text}

    asyncio.run(main())


class Counted(tokens.PromptMessage):
    """A message that knows how many of its kind are alive at once."""

    alive = 0
    most = 0

    def __init__(self, role: str, text: str) -> None:
        super().__init__(role, text)
        Counted.alive += 1
        Counted.most = max(Counted.most, Counted.alive)

    def __del__(self) -> None:
        Counted.alive -= 1


@pytest.mark.parametrize("limit", [None, 10])
def test_messages_read_a_piece_at_a_time_count_as_all_read_at_once(limit: int | None) -> None:
    texts = [f"Line {i} of the log." for i in range(5_000)]
    Counted.most = 0

    def read(piece: Sequence[str]) -> list[tokens.PromptMessage]:
        return [Counted("user", text) for text in piece]

    counted, turns = with_loop_turns(lambda: prompt_count.count_read(read, texts, limit))
    assert counted == asyncio.run(prompt_count.count_messages([tokens.PromptMessage("user", t) for t in texts], limit))
    assert turns >= len(texts) // prompt_count.MESSAGES_PER_TURN - 1
    # Only a piece's messages are alive at once: the count keeps their texts, not them.
    assert Counted.most <= prompt_count.MESSAGES_PER_TURN


def test_an_error_reading_a_piece_ends_the_count() -> None:
    def read(piece: Sequence[int]) -> list[str]:
        if 3_000 in piece:
            raise ValueError("unreadable")
        return [str(n) for n in piece]

    with pytest.raises(ValueError, match="unreadable"):
        asyncio.run(prompt_count.count_read(read, range(5_000)))
