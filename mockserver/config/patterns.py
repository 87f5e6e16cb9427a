"""Regular expressions that run in linear time: fixture ``message`` rules and request schema patterns.

Python's ``re`` backtracks: ``^(a+)+$`` against ``'a' * 27 + '!'`` takes seconds, doubling
with each extra character, and a match runs on the event loop, so one rule could stop
every stream and ``/health``. RE2 (the ``google-re2`` package, Google's engine behind a
wheel) guarantees time linear in the text's length, whatever the pattern. The price is
its syntax: no backreferences (``\\1``) and no lookaround (``(?=``, ``(?!``, ``(?<=``), which
RE2 refuses when the fixture is loaded, with a message saying so.

JSON Schema ``pattern`` keywords in requests (Structured Outputs, tool parameters) go
through :func:`schema_pattern`: RE2 when it can run the pattern, else Python's ``re``
for what only it can express (backreferences, lookaround, repeats over 1,000). Those
patterns only ever check strings the server generated itself, of bounded length.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import re2

CACHED_PATTERNS = 1024  # distinct patterns kept compiled; fixtures hold a handful, schemas a few more

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 would print every refused pattern to stderr


class PatternError(ValueError):
    """A pattern RE2 cannot run; the message says why, for a newcomer."""


@functools.lru_cache(maxsize=CACHED_PATTERNS)
def compile_pattern(source: str) -> Any:
    """``source`` compiled by RE2 (cached), or :class:`PatternError`."""
    try:
        return re2.compile(source, _OPTIONS)
    except re2.error as exc:
        detail = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise PatternError(
            f"not a valid regular expression for the linear-time engine (RE2): {detail}. RE2 has no "
            "backreferences and no lookaround; see https://github.com/google/re2/wiki/Syntax"
        ) from None


def search(source: str, text: str) -> bool:
    """Whether ``source`` matches anywhere in ``text``, in time linear in ``len(text)``."""
    return compile_pattern(source).search(text) is not None


def schema_pattern(source: str) -> Any:
    """A request schema's ``pattern``: RE2 when it accepts it, else Python's ``re`` (see the module's note)."""
    try:
        return compile_pattern(source)
    except PatternError:
        return _backtracking(source)


@functools.lru_cache(maxsize=CACHED_PATTERNS)
def _backtracking(source: str) -> Any:
    return re.compile(source)


def schema_search(source: str, text: str) -> bool:
    return schema_pattern(source).search(text) is not None
