"""The journal as a list you can filter and assert on, in the style of respx.

:class:`Calls` holds :class:`Call` entries (``calls.last``, ``calls.filter(model=...)``,
``assert_called_once()``), as :attr:`MockServer.requests <mockserver.testing.server.MockServer>`
and the ``mockserver`` fixture's ``requests`` return them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from mockserver.harness.journal import key_digest


@dataclass(frozen=True)
class Call:
    """One journal entry. Attributes mirror ``GET /_mock/requests`` (``.path``, ``.model``, ``.tier``,
    ``.status``, ``.usage``, ``.body``, ``.headers``, ``.fault``, ...); API keys are masked."""

    data: dict[str, Any]
    _key_digest: str | None = field(default=None, repr=False, compare=False)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.data[name]
        except KeyError:
            raise AttributeError(name) from None

    def json(self) -> dict[str, Any]:
        return self.data

    def matches(self, **filters: Any) -> bool:
        for name, wanted in filters.items():
            if name == "key":
                if self._key_digest != key_digest(wanted):
                    return False
            elif name == "path" and isinstance(wanted, str) and wanted.endswith("*"):
                if not str(self.data["path"]).startswith(wanted[:-1]):
                    return False
            elif self.data.get(name) != wanted:
                return False
        return True


class Calls(Sequence[Call]):
    """A snapshot of journal entries, oldest first."""

    def __init__(self, calls: Sequence[Call]) -> None:
        self._calls = list(calls)

    @overload
    def __getitem__(self, index: int) -> Call: ...
    @overload
    def __getitem__(self, index: slice) -> Calls: ...
    def __getitem__(self, index: int | slice) -> Call | Calls:
        if isinstance(index, slice):
            return Calls(self._calls[index])
        return self._calls[index]

    def __len__(self) -> int:
        return len(self._calls)

    def __iter__(self) -> Iterator[Call]:
        return iter(self._calls)

    def __repr__(self) -> str:
        return f"<Calls {[(c.method, c.path, c.status) for c in self._calls]}>"

    def filter(self, **filters: Any) -> Calls:
        """Entries whose fields equal the given values. ``key=`` takes the real key (shown masked);
        ``path="/v1/*"`` matches a prefix."""
        return Calls([c for c in self._calls if c.matches(**filters)])

    @property
    def last(self) -> Call:
        if not self._calls:
            raise AssertionError("no request was recorded")
        return self._calls[-1]

    @property
    def first(self) -> Call:
        if not self._calls:
            raise AssertionError("no request was recorded")
        return self._calls[0]

    @property
    def call_count(self) -> int:
        return len(self._calls)

    @property
    def called(self) -> bool:
        return bool(self._calls)

    def assert_called(self, **filters: Any) -> Calls:
        found = self.filter(**filters)
        if not found:
            raise AssertionError(f"expected a request matching {filters or 'anything'}; recorded: {self!r}")
        return found

    def assert_called_once(self, **filters: Any) -> Call:
        return self.assert_call_count(1, **filters).last

    def assert_call_count(self, count: int, **filters: Any) -> Calls:
        found = self.filter(**filters)
        if len(found) != count:
            raise AssertionError(
                f"expected {count} request(s) matching {filters or 'anything'}, got {len(found)}; recorded: {self!r}"
            )
        return found

    def assert_not_called(self, **filters: Any) -> None:
        found = self.filter(**filters)
        if found:
            raise AssertionError(f"expected no request matching {filters or 'anything'}; recorded: {found!r}")
