"""A long Responses ``input`` read in pieces: the same items, messages and errors as in one go."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mockserver import errors
from mockserver.engine import conversation
from mockserver.engine.in_turns import ITEMS_PER_TURN
from tests.support import with_loop_turns

LONG = 20_000


def long_input() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"Line {i} of the log."} for i in range(LONG)
    ]
    items[1] = {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": "{}"}
    items[2] = {"type": "function_call_output", "call_id": "c1", "output": "found it"}
    return items


@pytest.mark.parametrize(
    "raw", [None, "hello", [], long_input()[:3], long_input()], ids=["none", "text", "empty", "three", "long"]
)
def test_the_same_items_as_read_in_one_go(raw: Any) -> None:
    assert asyncio.run(conversation.read_input_in_turns(raw)) == conversation.read_input(raw)


def test_a_long_input_is_read_with_the_loops_turns() -> None:
    raw = long_input()
    items, turns = with_loop_turns(lambda: conversation.read_input_in_turns(raw))
    assert len(items) == LONG and turns >= LONG // ITEMS_PER_TURN - 1


@pytest.mark.parametrize("instructions", ["Be brief.", None, ""])
def test_an_input_read_a_piece_at_a_time_gives_the_prompt_read_at_once(instructions: str | None) -> None:
    raw = long_input()
    pieces = [range(0, 1), range(1, 300), range(300, LONG)]
    read = [message for piece in pieces for message in conversation.input_messages(instructions, raw, piece)]
    assert read == conversation.prompt_messages(instructions, conversation.read_input(raw))
    assert read == conversation.responses_prompt(instructions, raw)


def test_the_first_bad_item_is_refused_with_its_place() -> None:
    raw: list[Any] = long_input()
    raw[12_345] = {"type": "message", "content": "no role"}
    raw[15_000] = 42
    with pytest.raises(errors.MockAPIError) as at_once:
        conversation.read_input(raw)
    with pytest.raises(errors.MockAPIError) as in_turns:
        asyncio.run(conversation.read_input_in_turns(raw))
    with pytest.raises(errors.MockAPIError) as in_pieces:
        conversation.input_messages(None, raw, range(12_000, LONG))
    assert in_turns.value.param == in_pieces.value.param == at_once.value.param == "input[12345].role"
    assert in_turns.value.message == in_pieces.value.message == at_once.value.message
    assert conversation.responses_prompt(None, raw) is None  # refused later, for its shape
