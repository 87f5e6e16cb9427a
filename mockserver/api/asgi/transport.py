"""What the server reaches of uvicorn's connection under ASGI: its transport, through the ``send``
uvicorn hands the app (``send.__self__`` is uvicorn's request cycle).

ASGI has no message for "abort the connection", nor a way to write a body chunk without building a
message and a coroutine. :func:`connection_setup` puts, on every request's ``scope["state"]``:

- ``close_connection``: what closes the TCP connection under a reply (the ``drop_after`` fault: the
  client sees a transport error, not a clean end): the direct writer's :meth:`DirectWriter.close`,
  else the transport's ``close``, or None;
- ``server_send``: the server's own ``send``, which streamed events use to skip the middleware stack
  (see :mod:`mockserver.engine.scheduler`);
- ``server_receive``: the server's own ``receive``, which a stream's disconnect watch steps once the
  body is read (:class:`mockserver.api.sse.EventStreamResponse`): the middleware's own ``receive``
  only matters while the body is being read, and stepping it meant one more coroutine per open stream;
- ``direct_writer``: the :class:`DirectWriter` of the connection, or None: what writes a body chunk
  (:meth:`DirectWriter.write`) or a response's head (:meth:`DirectWriter.write_head`, which the
  middleware takes through :func:`head_writer`) straight on the transport, and the request cycle a
  stream's disconnect watch waits on (:mod:`mockserver.api.asgi.disconnect_watch`). The object itself,
  not its bound methods: each of those would be one more object per open stream;
- ``waited_s``: how long the request waited in the kernel before the app saw it
  (:mod:`mockserver.api.asgi.arrival`).

:func:`mockserver.api.asgi.app_patches.expose_connection_closer` runs it before anything else
wraps ``send``, and :func:`release` once the app has returned: the first five refer to uvicorn's
request cycle, which refers to the scope, so left on it they would make a reference cycle of the
request cycle, its transport and socket (some 20 objects a request) that only a pass of the
garbage collector frees. Taken off, they are freed as soon as uvicorn lets go of the request.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from logging import INFO
from types import ModuleType
from typing import Any

from starlette.types import Receive, Scope, Send

from mockserver.api.asgi import arrival

ConnectionSetup = Callable[[Scope, Receive, Send], None]


def connection_setup(ready_at: float) -> ConnectionSetup:
    """What puts the connection's means on a request's ``scope["state"]`` (see the module's docstring).

    ``ready_at`` (``time.monotonic()``) is when the app was built: requests that came before it
    waited for it, not for others."""

    def setup(scope: Scope, receive: Receive, send: Send) -> None:
        state = scope.get("state")
        if state is None:
            state = scope["state"] = {}
        writer = state["direct_writer"] = _direct_writer(send)
        if writer is not None:  # uvicorn's httptools server, as `serve` runs it
            transport = writer.transport
            state["close_connection"] = writer.close  # after what the writer holds, if corked
        else:
            transport = getattr(getattr(send, "__self__", None), "transport", None)
            close = getattr(transport, "close", None)
            state["close_connection"] = close if callable(close) else None
        state["server_send"] = send
        state["server_receive"] = receive
        state[arrival.WAITED] = arrival.kernel_wait(transport, ready_at)

    return setup


_CONNECTION_KEYS = ("close_connection", "server_send", "server_receive", "direct_writer")


def head_writer(scope: Scope, send: Send) -> DirectWriter | None:
    """What writes a response's head straight on the transport (:meth:`DirectWriter.write_head`), for a
    layer whose ``send`` is the server's own: None when it is not (another layer's ``send`` wraps it and
    must see the head go out), or when the server has no direct writer."""
    state = scope.get("state")
    if state is None or send is not state.get("server_send"):
        return None
    writer: DirectWriter | None = state.get("direct_writer")
    return writer


def direct_writer(scope: Scope) -> DirectWriter | None:
    """The connection's :class:`DirectWriter` on ``scope["state"]``, or None (not uvicorn's httptools server)."""
    state = scope.get("state")
    writer: DirectWriter | None = state.get("direct_writer") if state is not None else None
    return writer


def release(scope: Scope) -> None:
    """Take what :func:`connection_setup` put on ``scope["state"]`` that refers to uvicorn's request
    cycle off it again, once the app has returned (see the module's docstring)."""
    state = scope.get("state")
    if state is not None:
        for key in _CONNECTION_KEYS:
            state.pop(key, None)


# What the direct writer reads of uvicorn's request cycle, and the classes of cycle it can write for.
_CYCLE_FIELDS = (
    "transport",
    "flow",
    "scope",
    "default_headers",
    "keep_alive",
    "access_log",
    "access_logger",
    "chunked_encoding",
    "expected_content_length",
    "waiting_for_100_continue",
    "response_started",
    "response_complete",
    "disconnected",
)
# What it reads of the cycle's module: the status lines uvicorn writes, and what its access log line reads.
_MODULE_FIELDS = ("STATUS_LINE", "get_client_addr", "get_path_with_query_string")
# Of each class of cycle met: its module, or None if the cycle is not one the writer knows.
_USABLE_CYCLES: dict[type, ModuleType | None] = {}


def direct_body_writer(send: Send) -> Callable[[bytes], bool] | None:
    """For uvicorn's httptools server: ``write(body)`` puts one chunk of a chunked response body
    straight on the transport and returns True, exactly as uvicorn's ``send`` would for a
    ``http.response.body`` message with ``more_body`` (held instead while the writer is corked: see
    :class:`DirectWriter`); or returns False, writing nothing of it, whenever
    ``send`` has to be used instead (headers not sent yet, not chunked, the transport paused
    because the client stopped reading, the client gone, the response complete).

    Streamed events take this path (:mod:`mockserver.engine.scheduler`): it skips building a
    message and a coroutine per write, a fifth of the CPU per event at hundreds of streams.
    None when the server is not uvicorn's httptools one (h11, a test client).
    """
    writer = _direct_writer(send)
    return None if writer is None else writer.write


def _direct_writer(send: Send) -> DirectWriter | None:
    """The :class:`DirectWriter` of uvicorn's request cycle behind ``send``, or None when ``send`` is
    not the bound method of uvicorn's httptools request cycle (h11, a test client)."""
    cycle = getattr(send, "__self__", None)
    if cycle is None:
        return None
    kind = type(cycle)
    if kind not in _USABLE_CYCLES:  # checked on the first request of each class of cycle
        module = sys.modules.get(kind.__module__)
        usable = (
            kind.__module__ == "uvicorn.protocols.http.httptools_impl"
            and all(hasattr(cycle, name) for name in _CYCLE_FIELDS)  # uvicorn sets them in __init__
            and all(hasattr(module, name) for name in _MODULE_FIELDS)
        )
        _USABLE_CYCLES[kind] = module if usable else None
    module = _USABLE_CYCLES[kind]
    if module is None:
        return None
    return DirectWriter(cycle, module)


class DirectWriter:
    """What writes straight on the transport of one of uvicorn's httptools request cycles: a response's
    head (:meth:`write_head`) and the chunks of a chunked body (:meth:`write`), each exactly as uvicorn's
    ``send`` would write it, or nothing when ``send`` has to be used instead.

    One slotted object with bound methods rather than closures: it lives as long as its stream, and a
    closure's cells (and their tuple) were more objects per open stream for the garbage collector's
    passes to walk.

    Corked (:meth:`cork`), it holds what it writes until :meth:`uncork` puts it all on the transport in
    one system call: a stream's head and the events due as the stream opens (a first token due at once,
    every event at time scale 0) go out together rather than in a call each. Whatever else writes on
    the connection uncorks it first, so nothing overtakes what it holds: ``send`` for a body
    (:class:`mockserver.api.middleware._RequestIO` uncorks before it), this writer's own :meth:`close`,
    and a write it must leave to ``send`` (it uncorks before it returns False).
    """

    __slots__ = ("corked", "cycle", "flow", "transport", "uvicorn")

    def __init__(self, cycle: Any, uvicorn: ModuleType) -> None:
        self.cycle = cycle
        self.transport = cycle.transport
        self.flow = cycle.flow
        self.uvicorn = uvicorn  # the cycle's module: its status lines and what its access log line reads
        self.corked: list[bytes] | None = None  # what it holds while corked; None: it writes at once

    def cork(self) -> None:
        """Hold what this writer writes from now on until :meth:`uncork`."""
        if self.corked is None:
            self.corked = []

    def uncork(self) -> None:
        """Put what it holds on the transport, in one call, and write at once from now on."""
        held, self.corked = self.corked, None
        if held:
            self.transport.write(b"".join(held))

    def close(self) -> None:
        """Close the connection under the reply (the ``drop_after`` fault), after what it holds."""
        self.uncork()
        self.transport.close()

    def write(self, body: bytes) -> bool:
        cycle = self.cycle
        if (
            not cycle.chunked_encoding
            or self.flow.write_paused
            or cycle.disconnected
            or cycle.response_complete
            or not cycle.response_started
        ):
            self.uncork()  # the caller writes through send instead: what is held goes first
            return False
        chunk = b"%x\r\n%b\r\n" % (len(body), body)
        if self.corked is None:
            self.transport.write(chunk)
        else:
            self.corked.append(chunk)
        return True

    def write_head(self, status: int, headers: list[tuple[bytes, bytes]]) -> bool:
        """Write the status line and headers of a response, after uvicorn's own (``date``, ``server``),
        note on the cycle that the response started and how its body is framed, and log it, exactly as
        uvicorn's ``send`` does for an ``http.response.start`` message; True if it did. False, having done
        nothing, when ``send`` must be used instead: the head already sent, the client gone or not
        reading, or headers that are not plain (see :func:`_framing`), which uvicorn checks and reads.

        Why: uvicorn's ``send`` checks each header with two regular expressions, lowers its name and
        compares it with three others, for the 17 headers of every reply; this checks them all at once.
        """
        cycle = self.cycle
        # A False here need not uncork as write's does: nothing is held before the head.
        if cycle.response_started or cycle.disconnected or self.flow.write_paused or cycle.chunked_encoding is not None:
            return False
        uvicorn = self.uvicorn
        status_line = uvicorn.STATUS_LINE.get(status)
        lines = [*cycle.default_headers, *headers]
        length = _framing(lines)
        if status_line is None or length is None:
            return False
        cycle.response_started = True
        cycle.waiting_for_100_continue = False
        if cycle.access_log and cycle.access_logger.isEnabledFor(INFO):  # else Logger.info would do nothing
            scope = cycle.scope
            cycle.access_logger.info(
                '%s - "%s %s HTTP/%s" %d',
                uvicorn.get_client_addr(scope),
                scope["method"],
                uvicorn.get_path_with_query_string(scope),
                scope["http_version"],
                status,
            )
        tail = b"\r\n" if cycle.keep_alive else b"\r\nconnection: close\r\n"
        if length != _UNFRAMED:  # a content-length: the body is that many bytes
            cycle.expected_content_length = length
            cycle.chunked_encoding = False
        elif cycle.scope["method"] != "HEAD" and status not in (204, 304):  # neither given: uvicorn chunks the body
            cycle.chunked_encoding = True
            tail += b"transfer-encoding: chunked\r\n"
        head = b"".join((status_line, b"\r\n".join(map(b": ".join, lines)), tail, b"\r\n"))
        if self.corked is None:
            self.transport.write(head)
        else:
            self.corked.append(head)
        return True


# The bytes of a header name written as it is: lower-case token characters (RFC 9110). uvicorn lowers
# a name and refuses one with a byte its HEADER_RE finds; a name with anything else goes through send.
_NAME_BYTES = b"abcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+-.^_`|~"
# The bytes of a header value uvicorn writes as they are: all but the controls its HEADER_VALUE_RE finds.
_VALUE_BYTES = bytes(b for b in range(256) if b == 9 or 31 < b < 127 or b > 127)
# The headers uvicorn's send reads to frame the body or the connection.
_FRAMING = frozenset((b"content-length", b"transfer-encoding", b"connection"))
_UNFRAMED = -1  # what _framing gives for a head without a content-length


def _framing(lines: list[tuple[bytes, bytes]]) -> int | None:
    """The body's length that ``lines`` give, :data:`_UNFRAMED` when they give none, or None when they are
    not plain: when uvicorn's ``send`` would not write them as they are, or would read more of them.

    Plain: every name lower-case token characters, no value with a control character (checked on all the
    names and values at once), and of the headers that frame the body or the connection at most one
    ``content-length``, a number uvicorn reads as it is. (A head without a header at all is left to
    uvicorn too.)"""
    if not lines:
        return None
    names, values = zip(*lines, strict=True)
    if b"".join(names).translate(None, _NAME_BYTES) or b"".join(values).translate(None, _VALUE_BYTES):
        return None
    if _FRAMING.isdisjoint(names):
        return _UNFRAMED
    if names.count(b"content-length") != 1 or b"transfer-encoding" in names or b"connection" in names:
        return None
    value = values[names.index(b"content-length")]
    return int(value) if value.isdigit() else None  # a sign, a space or a "_" is left to uvicorn's int()
