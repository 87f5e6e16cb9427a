"""The depth check of a parsed body: both walks answer as the body's levels say, and a body of many
objects gives the event loop its turns, a long list a piece at a time."""

from __future__ import annotations

import asyncio
from typing import Any
from unittest import mock

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockserver import errors
from mockserver.engine import jsonbody
from tests.support import with_loop_turns

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=2), children, max_size=4),
    max_leaves=40,
)


def levels(value: Any) -> int:
    """How many levels of objects and arrays ``value`` has (a scalar: none), by plain recursion."""
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
    return 0 if children is None else 1 + max((levels(child) for child in children), default=0)


@settings(max_examples=300, deadline=None)
@given(value=json_values, max_depth=st.integers(1, 8), per_turn=st.integers(1, 5))
def test_the_walks_answer_as_the_levels_say(value: Any, max_depth: int, per_turn: int) -> None:
    with mock.patch.object(jsonbody, "VALUES_PER_TURN", per_turn):
        in_turns = asyncio.run(jsonbody.too_deep_in_turns(value, max_depth))
    assert in_turns == jsonbody.too_deep(value, max_depth) == (levels(value) > max_depth)


@pytest.mark.parametrize("raw", [b"[[[[1]]]]", b'{"a": {"b": [1]}}', b"not json", b"[" * 5])
def test_loads_in_turns_raises_and_returns_as_loads(raw: bytes) -> None:
    def outcome(load: Any) -> Any:
        try:
            return ("value", load())
        except errors.MockAPIError as exc:
            return ("error", exc.code, str(exc))

    plain = outcome(lambda: jsonbody.loads(raw, 3))
    turned = outcome(lambda: asyncio.run(jsonbody.loads_in_turns(raw, 3)))
    assert turned == plain


def test_a_body_of_many_objects_gives_the_loop_its_turns() -> None:
    raw = orjson.dumps({"messages": [{"role": "user", "content": [{"text": "x"}]} for _ in range(20_000)]})
    value, ran = with_loop_turns(lambda: jsonbody.loads_in_turns(raw, 64))
    assert len(value["messages"]) == 20_000
    # 100,001 values walked (each message, its two members, its part and the part's text): a turn
    # after each VALUES_PER_TURN of them, the long list walked a piece at a time too.
    assert ran >= 100_000 // jsonbody.VALUES_PER_TURN - 1
