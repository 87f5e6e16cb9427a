"""mapped: the same list as a plain loop, with the event loop's turns between pieces."""

from __future__ import annotations

import asyncio

import pytest

from mockserver.engine import in_turns
from mockserver.engine.in_turns import ITEMS_PER_TURN, mapped
from tests.support import with_loop_turns


@pytest.mark.parametrize("size", [0, 1, ITEMS_PER_TURN, ITEMS_PER_TURN + 1, 10 * ITEMS_PER_TURN + 3])
def test_the_same_list_as_a_plain_loop(size: int) -> None:
    items = list(range(size))
    assert asyncio.run(mapped(lambda n: n * 2, items)) == [n * 2 for n in items]


def test_a_short_list_takes_no_turn() -> None:
    _, ran = with_loop_turns(lambda: mapped(str, list(range(ITEMS_PER_TURN))))
    assert ran == 0


def test_a_long_list_gives_the_loop_a_turn_each_piece() -> None:
    items = list(range(10 * ITEMS_PER_TURN))
    result, ran = with_loop_turns(lambda: mapped(str, items))
    assert result == [str(n) for n in items]
    assert ran >= 9  # one turn between each two of the ten pieces


def test_an_exception_ends_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(in_turns, "ITEMS_PER_TURN", 4)

    def fail_at_nine(n: int) -> int:
        if n == 9:
            raise ValueError(n)
        return n

    with pytest.raises(ValueError, match="9"):
        asyncio.run(mapped(fail_at_nine, list(range(20))))


@pytest.mark.parametrize("size", [0, 1, ITEMS_PER_TURN, ITEMS_PER_TURN + 1, 10 * ITEMS_PER_TURN + 3])
def test_joined_and_summed_read_a_list_piece_by_piece_as_in_one_go(size: int) -> None:
    items = list(range(size))
    assert asyncio.run(in_turns.joined(lambda piece: [n for n in piece if n % 3], items)) == [n for n in items if n % 3]
    assert asyncio.run(in_turns.summed(sum, items)) == sum(items)


def test_joined_and_summed_give_the_loop_a_turn_each_piece() -> None:
    items = list(range(10 * ITEMS_PER_TURN))
    assert with_loop_turns(lambda: in_turns.joined(list, items)) == (items, 9)
    assert with_loop_turns(lambda: in_turns.summed(len, items)) == (len(items), 9)
    assert with_loop_turns(lambda: in_turns.summed(len, items[:ITEMS_PER_TURN]))[1] == 0
