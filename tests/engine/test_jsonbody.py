"""The depth check of a parsed body: the walk in turns gives the same answer as the plain walk, and
a body of many objects gives the event loop its turns."""

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

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=2), children, max_size=4),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None)
@given(value=json_values, max_depth=st.integers(1, 8))
def test_the_walk_in_turns_answers_as_the_plain_walk(value: Any, max_depth: int) -> None:
    with mock.patch.object(jsonbody, "CONTAINERS_PER_TURN", 2):
        in_turns = asyncio.run(jsonbody.too_deep_in_turns(value, max_depth))
    assert in_turns == jsonbody.too_deep(value, max_depth)


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
    ran = 0
    done = False

    async def other() -> None:
        nonlocal ran
        while not done:
            ran += 1
            await asyncio.sleep(0)

    async def both() -> Any:
        nonlocal done
        task = asyncio.create_task(other())
        await asyncio.sleep(0)
        try:
            return await jsonbody.loads_in_turns(raw, 64)
        finally:
            done = True
            await task

    assert len(asyncio.run(both())["messages"]) == 20_000
    # 40,000 objects and lists walked: a turn after each CONTAINERS_PER_TURN of them.
    assert ran >= 40_000 // jsonbody.CONTAINERS_PER_TURN - 1
