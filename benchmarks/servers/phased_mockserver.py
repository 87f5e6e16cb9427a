"""``mockserver serve``, with the CPU each step of a request takes counted, for
``python -m benchmarks request_phases``.

Usage: python benchmarks/servers/phased_mockserver.py OUT serve [serve's options]

Before the server starts, each step below is wrapped so that the thread CPU time it takes
(``time.thread_time``, which counts the kernel's time in a system call too) is added to its count.
On ``SIGUSR1`` the server appends its counts since the last signal to the file ``OUT``, as one JSON
line (``{"requests": N, "seconds": {step: total}}``), and starts again from zero.

The steps are nested, not disjoint: "the app, to its stream opened and watched" holds every other
(see :data:`STEPS`). A step that awaits and suspends would count what the loop ran meanwhile; in a
burst of streaming requests on this server none of them suspends (the body has come whole, the store
is in memory). Each wrapper costs about a microsecond more, which the counts include; the benchmark
measures the plain server in the same run to show how much the counting adds in all.

A step that no longer exists under its name stops the server at once with the name: the list below
follows the code, and must be mended with it.
"""

from __future__ import annotations

import contextvars
import functools
import json
import signal
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mockserver.api import admitting, middleware, pipeline, serving, sse
from mockserver.api.asgi import arrival, direct_routes, transport
from mockserver.api.openai.chat import completions, family
from mockserver.engine import scheduler
from mockserver.harness import scripted
from mockserver.service import access, exchange

APP = "the app, to its stream opened and watched"
# (step, where it is, its name there, whether it is a coroutine function), outermost first.
STEPS: list[tuple[str, Any, str, bool]] = [
    ("exchange opened (the middleware)", middleware, "_open_exchange", False),
    ("arrival time asked of the kernel", arrival, "kernel_wait", False),
    ("body read and validated", pipeline, "parse_body", True),
    ("admitted (all of admission and the plan)", admitting, "admit", True),
    ("model and tier resolved", admitting, "resolve", False),
    ("prompt counted", family.ChatAsked, "measured_at_once", False),
    ("planned", scripted.ScriptState, "planned_on_loop", False),
    ("the request's facts read (part of planned)", completions, "chat_facts", False),
    ("quota, slots and rate windows taken", access, "_take_shared_resources", True),
    ("reply made (respond)", serving, "respond", True),
    ("headers added to the head", exchange.ExchangeHooks, "add_headers", False),
    ("head made (and written, when the writer is not corked)", transport.DirectWriter, "write_head", False),
    ("what the corked writer held written (its system call)", transport.DirectWriter, "uncork", False),
    ("stream opened on the scheduler", scheduler.StreamScheduler, "open", False),
    ("client watched", sse, "watch_client", False),
]

_seconds: defaultdict[str, float] = defaultdict(float)
_requests = 0
_entered: contextvars.ContextVar[float] = contextvars.ContextVar("entered", default=-1.0)


def _timed(step: str, function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            _seconds[step] += time.thread_time() - started

    return timed


def _timed_coroutine(step: str, function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    async def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.thread_time()
        try:
            return await function(*args, **kwargs)
        finally:
            _seconds[step] += time.thread_time() - started

    return timed


def _watched(function: Callable[..., Any]) -> Callable[..., Any]:
    """``watch_client``, which a stream's response calls once the stream is open: the end of the app's
    work on the request until the stream's first wait."""

    @functools.wraps(function)
    def watched(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        finally:
            entered = _entered.get()
            if entered >= 0:
                _seconds[APP] += time.thread_time() - entered

    return watched


def _counted_app(call: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(call)
    async def counted(self: Any, scope: Any, receive: Any, send: Any) -> None:
        global _requests
        if scope["type"] == "http":
            _requests += 1
            _entered.set(time.thread_time())  # the request's own task: each has its own context
        await call(self, scope, receive, send)

    return counted


def install() -> None:
    for step, owner, name, coroutine in STEPS:
        found = getattr(owner, name, None)
        if found is None:
            raise SystemExit(f"phased_mockserver: {getattr(owner, '__name__', owner)}.{name} is gone; mend STEPS")
        wrapped = (_timed_coroutine if coroutine else _timed)(step, found)
        if step == "client watched":
            wrapped = _watched(wrapped)
        setattr(owner, name, wrapped)
    direct_routes.App.__call__ = _counted_app(direct_routes.App.__call__)  # type: ignore[method-assign]


def dump_to(out: Path) -> Callable[..., None]:
    def dump(*_: Any) -> None:
        global _requests
        line = {"requests": _requests, "seconds": dict(_seconds)}
        with out.open("a") as f:
            f.write(json.dumps(line) + "\n")
        _seconds.clear()
        _requests = 0

    return dump


if __name__ == "__main__":
    out, *serve = sys.argv[1:]
    install()
    signal.signal(signal.SIGUSR1, dump_to(Path(out)))
    sys.argv = ["mockserver", *serve]
    from mockserver.entry import main

    main()
