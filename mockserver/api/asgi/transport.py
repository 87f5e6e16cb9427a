"""What the server reaches of uvicorn's connection under ASGI: its transport, through the ``send``
uvicorn hands the app (``send.__self__`` is uvicorn's request cycle).

ASGI has no message for "abort the connection", nor a way to write a body chunk without building a
message and a coroutine. :func:`connection_setup` puts, on every request's ``scope["state"]``:

- ``close_connection``: the transport's ``close``, which closes the TCP connection under a reply
  (the ``drop_after`` fault: the client sees a transport error, not a clean end), or None;
- ``server_send``: the server's own ``send``, which streamed events use to skip the middleware stack
  (see :mod:`mockserver.engine.scheduler`);
- ``write_body``: a chunk written straight on the transport (:func:`direct_body_writer`), or None;
- ``waited_s``: how long the request waited in the kernel before the app saw it
  (:mod:`mockserver.api.asgi.arrival`).

:func:`mockserver.api.asgi.app_patches.expose_connection_closer` runs it before anything else
wraps ``send``, and :func:`release` once the app has returned: the first three refer to uvicorn's
request cycle, which refers to the scope, so left on it they would make a reference cycle of the
request cycle, its transport and socket (some 20 objects a request) that only a pass of the
garbage collector frees. Taken off, they are freed as soon as uvicorn lets go of the request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.types import Scope, Send

from mockserver.api.asgi import arrival

ConnectionSetup = Callable[[Scope, Send], None]


def connection_setup(ready_at: float) -> ConnectionSetup:
    """What puts the connection's means on a request's ``scope["state"]`` (see the module's docstring).

    ``ready_at`` (``time.monotonic()``) is when the app was built: requests that came before it
    waited for it, not for others."""

    def setup(scope: Scope, send: Send) -> None:
        cycle = getattr(send, "__self__", None)
        transport = getattr(cycle, "transport", None)
        close = getattr(transport, "close", None)
        state = scope.get("state")
        if state is None:
            state = scope["state"] = {}
        state["close_connection"] = close if callable(close) else None
        state["server_send"] = send
        state["write_body"] = direct_body_writer(send)
        state[arrival.WAITED] = arrival.kernel_wait(transport, ready_at)

    return setup


_CONNECTION_KEYS = ("close_connection", "server_send", "write_body")


def release(scope: Scope) -> None:
    """Take what :func:`connection_setup` put on ``scope["state"]`` that refers to uvicorn's request
    cycle off it again, once the app has returned (see the module's docstring)."""
    state = scope.get("state")
    if state is not None:
        for key in _CONNECTION_KEYS:
            state.pop(key, None)


# What direct_body_writer reads of uvicorn's request cycle, and the classes of cycle it can write for.
_CYCLE_FIELDS = ("transport", "flow", "chunked_encoding", "response_started", "response_complete", "disconnected")
_USABLE_CYCLES: dict[type, bool] = {}


def direct_body_writer(send: Send) -> Callable[[bytes], bool] | None:
    """For uvicorn's httptools server: ``write(body)`` puts one chunk of a chunked response body
    straight on the transport and returns True, exactly as uvicorn's ``send`` would for a
    ``http.response.body`` message with ``more_body``; or returns False, doing nothing, whenever
    ``send`` has to be used instead (headers not sent yet, not chunked, the transport paused
    because the client stopped reading, the client gone, the response complete).

    Streamed events take this path (:mod:`mockserver.engine.scheduler`): it skips building a
    message and a coroutine per write, a fifth of the CPU per event at hundreds of streams.
    None when the server is not uvicorn's httptools one (h11, a test client).
    """
    cycle = getattr(send, "__self__", None)
    if cycle is None:
        return None
    usable = _USABLE_CYCLES.get(type(cycle))
    if usable is None:  # checked on the first request of each class of cycle (uvicorn sets these in __init__)
        usable = type(cycle).__module__ == "uvicorn.protocols.http.httptools_impl" and all(
            hasattr(cycle, name) for name in _CYCLE_FIELDS
        )
        _USABLE_CYCLES[type(cycle)] = usable
    if not usable:
        return None
    return _BodyWriter(cycle).write


class _BodyWriter:
    """:func:`direct_body_writer`'s ``write``, as the bound method of one slotted object rather than a
    closure: it lives as long as its stream, and a closure's cells (and their tuple) were more objects
    per open stream for the garbage collector's passes to walk."""

    __slots__ = ("cycle", "flow", "transport")

    def __init__(self, cycle: Any) -> None:
        self.cycle = cycle
        self.transport = cycle.transport
        self.flow = cycle.flow

    def write(self, body: bytes) -> bool:
        cycle = self.cycle
        if (
            not cycle.chunked_encoding
            or self.flow.write_paused
            or cycle.disconnected
            or cycle.response_complete
            or not cycle.response_started
        ):
            return False
        self.transport.write(b"%x\r\n%b\r\n" % (len(body), body))
        return True
