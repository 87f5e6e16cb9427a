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
def test_the_same_items_and_messages_as_read_in_one_go(raw: Any) -> None:
    items = asyncio.run(conversation.read_input_in_turns(raw))
    assert items == conversation.read_input(raw)
    messages = asyncio.run(conversation.prompt_messages_in_turns("Be brief.", items))
    assert messages == conversation.prompt_messages("Be brief.", items)
    assert asyncio.run(conversation.responses_prompt("Be brief.", raw)) == messages


def test_a_long_input_is_read_with_the_loops_turns() -> None:
    raw = long_input()
    items, turns = with_loop_turns(lambda: conversation.read_input_in_turns(raw))
    assert len(items) == LONG and turns >= LONG // ITEMS_PER_TURN - 1
    _, turns = with_loop_turns(lambda: conversation.prompt_messages_in_turns(None, items))
    assert turns >= LONG // ITEMS_PER_TURN - 1


def test_the_first_bad_item_is_refused_with_its_place() -> None:
    raw: list[Any] = long_input()
    raw[12_345] = {"type": "message", "content": "no role"}
    raw[15_000] = 42
    with pytest.raises(errors.MockAPIError) as at_once:
        conversation.read_input(raw)
    with pytest.raises(errors.MockAPIError) as in_pieces:
        asyncio.run(conversation.read_input_in_turns(raw))
    assert in_pieces.value.param == at_once.value.param == "input[12345].role"
    assert in_pieces.value.message == at_once.value.message
    assert asyncio.run(conversation.responses_prompt(None, raw)) is None  # refused later, for its shape
