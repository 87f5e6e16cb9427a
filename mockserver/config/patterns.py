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
patterns only ever check strings the server generated itself, of bounded length, but a
backtracking search can still take exponential time (``^(?!(a+)+b)a{40}$``), and Python's
``re`` holds the GIL while it runs. So a backtracking pattern is run in a checking process of its
own (:class:`PatternChecker`), and the server waits for each answer at most
:data:`CHECK_BUDGET_S`; past it, the checking process is killed, the pattern is remembered as too
slow, and the request gets a 400 saying so (:class:`PatternTooSlow`). Patterns that answer in time,
the usual case, keep working as they did.

The event loop never waits for the checking process. A reply is planned on the loop inside
:func:`off_loop`; the first backtracking check it meets raises :class:`WouldWait` there, and the plan
is made again from the start in :data:`_PLANNING`, a thread of its own (planning is deterministic,
and a script's sequence step is chosen once per request), where the wait for the answer blocks
only that thread: other streams and ``/health`` go on. Plans without such a pattern never leave the
loop.

The checking process is one bare interpreter per server process (``python -I``, the standard library
only), started on first use. It is bounded on its own side as well: its address space is capped at
:data:`CHECKER_MEMORY_BYTES`, and each search arms ``SIGALRM`` for :data:`CHECKER_SEARCH_LIMIT_S`,
whose default action ends the process, so a search outlives its server by at most that long even if
the server is killed with ``SIGKILL``. It ends when its stdin closes (the server exiting) and is
killed by :meth:`PatternChecker.close` at exit.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import contextvars
import functools
import json
import re
import select
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar, cast

CACHED_PATTERNS = 1024  # distinct patterns kept compiled; fixtures hold a handful, schemas a few more


CHECK_BUDGET_S = 0.1  # the longest the server waits for backtracking searches, per check and per reply
START_TIMEOUT_S = 10.0  # for the checking process to start (a bare interpreter: milliseconds)
CHECKER_MEMORY_BYTES = 512 * 1024 * 1024  # the checking process's address space (RLIMIT_AS)
CHECKER_SEARCH_LIMIT_S = 2  # a search still running after this ends the checking process (SIGALRM)

T = TypeVar("T")


class PatternError(ValueError):
    """A pattern RE2 cannot run; the message says why, for a newcomer."""


class PatternTooSlow(PatternError):
    """A schema pattern RE2 cannot run, whose search took longer than :data:`CHECK_BUDGET_S`."""

    def __init__(self, source: str) -> None:
        super().__init__(
            f"the pattern {source!r} needs Python's backtracking engine (it has backreferences or "
            f"lookaround, which RE2 cannot run), and checking a value against it took longer than "
            f"{CHECK_BUDGET_S * 1000:g} ms, the server's limit. Rewrite it without nested repeats inside "
            "lookaround or before a backreference, or as an RE2 pattern "
            "(https://github.com/google/re2/wiki/Syntax)"
        )


@functools.cache
def _re2() -> tuple[Any, Any]:
    """The RE2 module and its options, imported with the first pattern compiled (not at start-up)."""
    import re2

    options = re2.Options()
    options.log_errors = False  # RE2 would print every refused pattern to stderr
    return re2, options


@functools.lru_cache(maxsize=CACHED_PATTERNS)
def compile_pattern(source: str) -> Any:
    """``source`` compiled by RE2 (cached), or :class:`PatternError`."""
    re2, options = _re2()
    try:
        return re2.compile(source, options)
    except re2.error as exc:
        detail = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise PatternError(
            f"not a valid regular expression for the linear-time engine (RE2): {detail}. RE2 has no "
            "backreferences and no lookaround; see https://github.com/google/re2/wiki/Syntax"
        ) from None


class DeferredPattern:
    """A pattern compiled by :func:`compile_pattern` on its first use rather than when its module is
    imported: a module's constant patterns then cost nothing to a server that never runs them, and
    start-up does not wait for them. It answers every method of the compiled pattern."""

    __slots__ = ("_compiled", "source")

    def __init__(self, source: str) -> None:
        self.source = source
        self._compiled: Any = None

    def __getattr__(self, name: str) -> Any:
        if self._compiled is None:
            self._compiled = compile_pattern(self.source)
        return getattr(self._compiled, name)


def deferred_pattern(source: str) -> Any:
    """``source`` as a :class:`DeferredPattern`: for the patterns a module holds as constants."""
    return DeferredPattern(source)


class DeferredRe:
    """A pattern of Python's ``re`` compiled on its first use rather than when its module is imported
    (a pattern over Unicode classes such as ``\\w`` takes milliseconds to compile, and start-up does not
    need it). The first use puts the compiled pattern's methods on the instance, so later uses find
    them as plain attributes, without going through :meth:`__getattr__` again."""

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source = source
        self._flags = flags

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        compiled = re.compile(self._source, self._flags)
        for method in ("search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split"):
            setattr(self, method, getattr(compiled, method))
        return getattr(compiled, name)


def deferred_re(source: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(source, flags)`` on first use: for the constant patterns a module holds. Typed as
    the pattern it stands for, whose search and match methods it answers."""
    return cast("re.Pattern[str]", DeferredRe(source, flags))


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
    re.compile(source)  # a pattern Python's parser refuses is refused here, at once
    return _Backtracking(source)


class _Backtracking:
    """A pattern only Python's ``re`` can run, searched in the checking process within the budget."""

    __slots__ = ("source",)

    def __init__(self, source: str) -> None:
        self.source = source

    def search(self, text: str) -> bool | None:
        """True if the pattern matches in ``text``, else None (as ``re``'s ``search`` is falsy)."""
        if _on_loop.get() and self.source not in CHECKER.too_slow:
            raise WouldWait()  # the event loop would wait for the answer: plan in a thread instead
        return True if CHECKER.search(self.source, text) else None


class WouldWait(BaseException):
    """Raised inside :func:`off_loop`'s first attempt where a backtracking check would make the event
    loop wait. A ``BaseException``, so that no ``except Exception`` in the planner swallows it."""


class PatternChecker:
    """One checking process per server process, started on first use and again after a kill.

    A search is sent to it as one JSON line on its stdin and its answer awaited on its stdout for
    at most ``budget`` seconds. Past it, the process is killed (a backtracking search can't be
    interrupted otherwise), the pattern is remembered as too slow (at most
    :data:`CACHED_PATTERNS` of them), and :class:`PatternTooSlow` is raised; that pattern is
    refused at once from then on. The process is a bare interpreter running :data:`_CHECKS`, the
    standard library only, so it starts in milliseconds and imports nothing of the caller's."""

    def __init__(self, budget: float = CHECK_BUDGET_S) -> None:
        self.budget = budget
        self._lock = threading.Lock()  # servers in threads of one process share the checker
        self._process: subprocess.Popen[bytes] | None = None
        self.too_slow: OrderedDict[str, None] = OrderedDict()

    def search(self, source: str, text: str) -> bool:
        if source in self.too_slow:
            raise PatternTooSlow(source)
        left = _left.get()  # what is left of the budget of the value being made (see within_budget)
        if left is not None and left[0] <= 0:
            raise PatternTooSlow(source)
        wait = self.budget if left is None else min(self.budget, left[0])
        with self._lock:
            process = self._process if self._process is not None and self._process.poll() is None else self._start()
            assert process.stdin is not None and process.stdout is not None
            started = time.monotonic()
            process.stdin.write(json.dumps([source, text]).encode() + b"\n")
            process.stdin.flush()
            ready, _, _ = select.select([process.stdout], [], [], wait)
            if left is not None:
                left[0] -= time.monotonic() - started
            if not ready:
                self._stop()
                if wait >= self.budget:  # this one search took the whole budget: the pattern is too slow
                    self.too_slow[source] = None
                    while len(self.too_slow) > CACHED_PATTERNS:
                        self.too_slow.popitem(last=False)
                raise PatternTooSlow(source)
            answer = process.stdout.readline().strip()
            if answer not in (b"0", b"1"):  # the process ended mid-search (its own time or memory limit)
                self._stop()
                raise PatternTooSlow(source)
            return answer == b"1"

    def _start(self) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            [sys.executable, "-I", "-c", _CHECKS], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0
        )
        self._process = process
        assert process.stdout is not None
        # Ready first: the budget counts the search, not the interpreter's start.
        ready, _, _ = select.select([process.stdout], [], [], START_TIMEOUT_S)
        if not ready or process.stdout.readline().strip() != b"ready":
            self._stop()
            raise RuntimeError("the process that checks backtracking patterns did not start")
        return process

    def _stop(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            for stream in (self._process.stdin, self._process.stdout):
                if stream is not None:
                    stream.close()
        self._process = None

    def close(self) -> None:
        with self._lock:
            self._stop()


# The checking process: each line is [pattern, text]; each answer 1 (it matches) or 0. No SIGALRM
# handler is installed, so the alarm's default action ends the process, even inside a search.
_CHECKS = f"""
import json, re, resource, signal, sys
resource.setrlimit(resource.RLIMIT_AS, ({CHECKER_MEMORY_BYTES}, {CHECKER_MEMORY_BYTES}))
sys.stdout.buffer.write(b"ready\\n")
sys.stdout.buffer.flush()
for line in sys.stdin.buffer:
    source, text = json.loads(line)
    signal.alarm({CHECKER_SEARCH_LIMIT_S})
    try:
        found = re.compile(source).search(text)
    except Exception:  # MemoryError past the cap: no match
        found = None
    signal.alarm(0)
    sys.stdout.buffer.write(b"1\\n" if found else b"0\\n")
    sys.stdout.buffer.flush()
"""


CHECKER = PatternChecker()

# The budget left to the backtracking searches of the value being made: one list per
# within_budget block, so that searches made for one reply share it.
_left: contextvars.ContextVar[list[float] | None] = contextvars.ContextVar("pattern_budget", default=None)


@contextlib.contextmanager
def within_budget(seconds: float = CHECK_BUDGET_S) -> Iterator[None]:
    """Let the backtracking searches made inside the block wait ``seconds`` in all: making one
    reply's structured value waits at most that long for them, however many candidates it tries."""
    token = _left.set([seconds])
    try:
        yield
    finally:
        _left.reset(token)


# Set inside off_loop's first attempt, on the event loop: a backtracking check raises WouldWait there.
_on_loop: contextvars.ContextVar[bool] = contextvars.ContextVar("pattern_checks_on_loop", default=False)

# The thread that plans the replies that need backtracking checks: one, as the checking process
# answers one search at a time; the plans waiting for it wait in its queue, off the event loop.
_PLANNING = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pattern-checks")


async def off_loop(work: Callable[[], T], *, tried_on_loop: bool = False) -> T:
    """``work()``, run on the event loop unless it makes a backtracking check; then run again from
    the start in :data:`_PLANNING`, so that the loop never waits for the checking process.
    ``tried_on_loop``: :func:`on_loop` ran it already, and it would have waited: straight to the thread.

    ``work`` must give the same result when run again (a plan does: its choices are seeded and a
    script's steps are chosen once per request)."""
    if not tried_on_loop and (done := on_loop(work)) is not None:
        return done
    context = contextvars.copy_context()  # the request's context variables, without the flag
    return await asyncio.get_running_loop().run_in_executor(_PLANNING, context.run, work)


def on_loop(work: Callable[[], T | None]) -> T | None:
    """``work()`` on the event loop, without a coroutine to await (most plans), or None if it would
    wait for a backtracking check (then :func:`off_loop` runs it in the thread). ``work`` gives no None."""
    token = _on_loop.set(True)
    try:
        return work()
    except WouldWait:
        return None
    finally:
        _on_loop.reset(token)


def _close() -> None:
    _PLANNING.shutdown(wait=False, cancel_futures=True)
    CHECKER.close()


atexit.register(_close)


def schema_search(source: str, text: str) -> bool:
    return schema_pattern(source).search(text) is not None
