"""Test helpers shared by :class:`~mockserver.server.MockServer` and the pytest plugin.

- :class:`Calls`: the journal as a list you can filter and assert on, in the
  style of respx (``calls.last``, ``calls.filter(model=...)``, ``assert_called_once()``).
- :func:`config_patch`: keyword conveniences (``tokens_per_second=...``,
  ``faults=[...]``, ``scripts=[...]``) turned into a ``PATCH /_mock/config`` merge patch.
- :class:`MockServerHandle`: one test's view of a running server: clients that
  carry its ``x-mock-test-id``, its own journal, and ``configure``/``reset``.

Nothing here imports ``openai`` until a client is asked for.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

from mockserver.journal import TEST_ID_HEADER

if TYPE_CHECKING:
    import openai

    from mockserver.server import MockServer

DEFAULT_KEY = "sk-mock-preview"
TIERS = ("default", "priority", "flex", "ultrafast")


def key_digest(key: str | None) -> str | None:
    return None if key is None else hashlib.sha256(key.encode()).hexdigest()


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


def config_patch(patch: Mapping[str, Any] | None = None, /, **changes: Any) -> dict[str, Any]:
    """A ``/_mock/config`` merge patch from a mapping plus keyword conveniences.

    - ``tokens_per_second`` / ``ttft_ms``: a number for every tier, or ``{"ultrafast": 2000}``;
    - ``faults``: a list of faults (``"once status=503"``, ``{"status": 429}``, or whole rules
      ``{"match": {...}, "fault": ..., "count": "once"}``) replacing the rules; or the whole
      ``faults`` section as a mapping;
    - ``scripts``: a list of script rules (``{"match": {...}, "reply": {...}}``), or of bare replies
      (``"pong"`` for a text, ``{"tool_calls": [...]}``) that answer every request; or a mapping of
      regexes over the latest user message to replies (``{"(?i)^ping$": "pong"}``), tried in order;
    - anything else (``time_scale``, ``seed``, ``policies``, ``accounts``, ...) as given.
    """
    result: dict[str, Any] = dict(patch or {})
    for name in ("tokens_per_second", "ttft_ms"):
        value = changes.pop(name, None)
        if value is None:
            continue
        per_tier = value if isinstance(value, Mapping) else dict.fromkeys(TIERS, value)
        profiles = result.setdefault("profiles", {})
        for tier, number in per_tier.items():
            profiles.setdefault(tier, {})[name] = number
    faults = changes.pop("faults", None)
    if faults is not None:
        result["faults"] = dict(faults) if isinstance(faults, Mapping) else {"rules": [_rule(f) for f in faults]}
    scripts = changes.pop("scripts", None)
    if scripts is not None:
        result["scripts"] = _script_rules(scripts)
    result.update(changes)
    return result


def _rule(fault: Any) -> Any:
    if isinstance(fault, Mapping) and "fault" in fault:
        return dict(fault)
    return {"fault": fault}


def _script_rules(scripts: Any) -> list[Any]:
    if isinstance(scripts, Mapping):
        return [{"match": {"message": pattern}, "reply": _script_reply(reply)} for pattern, reply in scripts.items()]
    if isinstance(scripts, str):
        raise TypeError("scripts must be a list of rules or replies, or a mapping of regexes to replies")
    return [dict(s) if isinstance(s, Mapping) and "reply" in s else {"reply": _script_reply(s)} for s in scripts]


def _script_reply(reply: Any) -> Any:
    return {"text": reply} if isinstance(reply, str) else reply


class MockServerHandle:
    """One test's handle on a running :class:`~mockserver.server.MockServer` (the ``mockserver`` fixture).

    Its clients send ``x-mock-test-id``, so :attr:`requests` shows this test's requests
    (plus any sent without a test id while the test ran, e.g. by code under test that
    builds its own ``OpenAI()`` from ``OPENAI_BASE_URL``).
    """

    def __init__(self, server: MockServer, test_id: str) -> None:
        self.server = server
        self.test_id = test_id
        self._baseline = server.state.snapshot()
        self._since = server.state.journal.last_seq

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def base_url(self) -> str:
        """What to give the SDK as ``base_url`` (or ``OPENAI_BASE_URL``)."""
        return self.server.base_url

    @property
    def headers(self) -> dict[str, str]:
        """Headers that put a request made by another client into this test's journal."""
        return {TEST_ID_HEADER: self.test_id}

    def client(self, key: str = DEFAULT_KEY, *, strict: bool = False, **kwargs: Any) -> openai.OpenAI:
        """An ``openai.OpenAI`` for ``key``. ``strict`` turns on ``_strict_response_validation``."""
        return self.server.client(key, strict=strict, test_id=self.test_id, **kwargs)

    def async_client(self, key: str = DEFAULT_KEY, *, strict: bool = False, **kwargs: Any) -> openai.AsyncOpenAI:
        return self.server.async_client(key, strict=strict, test_id=self.test_id, **kwargs)

    def configure(self, patch: Mapping[str, Any] | None = None, /, **changes: Any) -> None:
        """Change the configuration for this test; undone when the test ends. See :func:`config_patch`."""
        self.server.configure(patch, **changes)

    @property
    def requests(self) -> Calls:
        """This test's journal, oldest first, once every reply already read has been recorded."""
        return self.server.calls(test_id=self.test_id, include_unscoped=True, since=self._since)

    def reset(self) -> None:
        """Back to the configuration the test started with; forget its journal and fault counters."""
        state = self.server.state
        state.restore(self._baseline)
        state.reset_scope(self.test_id)
        self._since = state.journal.last_seq

    def close(self) -> None:
        self.reset()
