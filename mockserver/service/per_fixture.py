"""Values worked out from the fixture alone, remembered until the fixture is replaced (the rate-limit
targets of :mod:`mockserver.service.ratelimits`)."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from mockserver.config.fixture import Fixture

Key = TypeVar("Key", bound=Hashable)
Value = TypeVar("Value")


class PerFixture(Generic[Key, Value]):
    """Values that depend on the fixture alone, worked out once and remembered until it is replaced.

    A fixture never changes: ``PATCH /_mock/config`` and a reset put a new one in place, and the
    values remembered for the old one are dropped the first time the new one is asked about. So at
    most one fixture's values are kept, and their number is bounded by what the fixture declares.
    Safe across threads (several servers may share a process): each lookup reads the fixture and
    its table together, and a value is computed again rather than ever taken from another fixture.
    """

    def __init__(self) -> None:
        self._current: tuple[Fixture | None, dict[Key, Value]] = (None, {})

    def get(self, fixture: Fixture, key: Key, compute: Callable[[], Value]) -> Value:
        owner, table = self._current
        if owner is not fixture:
            table = {}
            self._current = (fixture, table)
        if key in table:
            return table[key]
        value = table[key] = compute()
        return value

    def find(self, fixture: Fixture, key: Key) -> Value | None:
        """The value remembered for ``key`` of ``fixture``, or None (a lookup that makes no closure)."""
        owner, table = self._current
        return table.get(key) if owner is fixture else None

    def put(self, fixture: Fixture, key: Key, value: Value) -> None:
        """Remember ``value`` for ``key`` of ``fixture``, which becomes the one whose values are kept."""
        owner, table = self._current
        if owner is not fixture:
            table = {}
            self._current = (fixture, table)
        table[key] = value
