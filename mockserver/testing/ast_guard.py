"""``ast.parse`` with the garbage collector held off, in pytest sessions on the CPython releases whose
AST constructor keeps its recursion depth in state the whole interpreter shares (3.11 before 3.11.8,
3.12 before 3.12.2).

On those releases, Python code that runs while ``ast.parse`` builds its tree and parses again resets
that shared depth, and the first parse fails with ``SystemError: AST constructor recursion depth
mismatch`` for a tree it built correctly. The constructor runs no Python code of its own, but an
allocation can start a garbage collection, and a collection runs finalizers (``__del__``), weakref
callbacks and gc callbacks. A finalizer that raises is reported through ``sys.unraisablehook``,
whose pytest version formats a traceback, which parses source: a second parse inside the first. So
a test that leaves behind an object whose ``__del__`` fails (an SDK client whose constructor raised,
say) can take the whole session down with an ``INTERNALERROR`` when pytest next formats a failure
(it parses each traceback entry's file), and no summary is printed. Another thread's parse (the
in-process server, a traceback it logs) meets the same shared state the same way.

With collection held off while a parse runs, the constructor runs no Python code, so nothing can
parse inside it and no other thread runs until it returns. Nothing is caught or retried: every error
is raised as the interpreter raises it. The pytest plugin installs this on the releases that need it.
"""

from __future__ import annotations

import ast
import functools
import sys
from typing import Any

from mockserver.api.asgi.collector import Pause

#: The releases whose AST constructor shares its recursion depth across calls: [first, fixed).
AFFECTED = (((3, 11, 0), (3, 11, 8)), ((3, 12, 0), (3, 12, 2)))

_parsing = Pause()  # the collector is held off while a parse is in flight, in any thread


def needed(version: tuple[int, ...] = tuple(sys.version_info[:3])) -> bool:
    """Whether this interpreter's ``ast.parse`` has the shared recursion depth."""
    return any(first <= version < fixed for first, fixed in AFFECTED)


def install() -> bool:
    """Replace ``ast.parse`` (which ``ast.literal_eval``, ``traceback`` and pytest call) with the
    guarded one, where :func:`needed`; True if it is in place. Installing twice changes nothing."""
    if not needed():
        return False
    if not getattr(ast.parse, "_holds_off_collection", False):
        ast.parse = _guarded(ast.parse)
    return True


def _guarded(parse: Any) -> Any:
    @functools.wraps(parse)
    def guarded_parse(*args: Any, **kwargs: Any) -> Any:
        _parsing.enter()
        try:
            return parse(*args, **kwargs)
        finally:
            _parsing.leave()

    guarded_parse._holds_off_collection = True  # type: ignore[attr-defined]
    return guarded_parse
