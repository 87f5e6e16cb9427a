"""A stored response's input items listed in turns: the same items, with the same ids drawn in the same
order, as listed at once; and a long input gives the event loop its turns."""

from __future__ import annotations

import asyncio
from typing import Any

from mockserver.api.openai.responses.input_items import input_items, input_items_in_turns
from mockserver.engine.in_turns import ITEMS_PER_TURN
from mockserver.server_state import IdFactory
from tests.support import with_loop_turns


def mixed(count: int) -> list[dict[str, Any]]:
    kinds: list[dict[str, Any]] = [
        {"role": "user", "content": "hello"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "done", "id": "fco_given"},
        {"type": "web_search_call", "id": "ws_1"},  # accepted, not listed
    ]
    return [kinds[n % len(kinds)] for n in range(count)]


def test_the_same_items_and_ids_as_at_once() -> None:
    for raw in (None, "just text", mixed(3), mixed(3 * ITEMS_PER_TURN + 7)):
        at_once = input_items(raw, IdFactory(7).prefixed)
        in_turns = asyncio.run(input_items_in_turns(raw, IdFactory(7).prefixed))
        assert in_turns == at_once


def test_a_long_input_gives_the_loop_its_turns() -> None:
    raw = mixed(20 * ITEMS_PER_TURN)
    listed, ran = with_loop_turns(lambda: input_items_in_turns(raw, IdFactory(1).prefixed))
    assert len(listed) == len(raw) * 4 // 5  # every item but the unsimulated kind
    assert ran >= 19
