"""Watching for the client going away during a stream, without a task.

A stream's reply must stop at once when its client leaves, even while it waits for a distant first
token. The usual way, a task awaiting ``receive()``, costs a task per stream, made before the stream's
first token, and two more turns of the event loop, for a wait that almost always ends with the stream.

- :class:`CycleWatch`, under uvicorn's httptools server (as ``serve`` runs it): waits on the request
  cycle's own message event, as uvicorn's ``receive()`` does, but as one small object in the event's
  waiters instead of ``receive()``'s two coroutines, their future and its awaiting (one object per open
  stream instead of seven, for the garbage collector's passes to walk).
- :class:`DisconnectWatch`, anywhere else (h11, a test client): drives the ``receive()`` coroutine
  itself, through the coroutine protocol (``send(None)``, a done callback on the future it yields), as
  a task would.

:func:`watch_client` picks one. Both call ``on_gone(subject)`` once, when the client has gone.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

from starlette.types import Message, Receive

from mockserver.api.asgi.transport import DirectWriter

# The context every watch's later steps run in. A callback given no context runs in a copy of the caller's,
# made when it is added: one more object per open stream for the garbage collector's passes to walk, for
# a ``receive()`` that reads no context variable. Callbacks run one at a time, so one context serves all.
_STEPS = contextvars.Context()


class _Watch:
    """What both watches share: :attr:`gone`, and the future :meth:`left` gives, done once it is true."""

    __slots__ = ("_left", "gone")

    def __init__(self) -> None:
        self._left: asyncio.Future[None] | None = None
        self.gone = False

    def _went(self) -> None:
        """The client has gone: say so, and finish the future :meth:`left` gave, if it gave one."""
        self.gone = True
        if self._left is not None and not self._left.done():
            self._left.set_result(None)

    def left(self) -> asyncio.Future[None]:
        """A future that is done once the client has gone."""
        if self._left is None:
            self._left = asyncio.get_running_loop().create_future()
            if self.gone:
                self._left.set_result(None)
        return self._left


class DisconnectWatch(_Watch):
    """Calls ``on_gone(*args)`` once, when ``receive`` says the client went away (``http.disconnect``), or fails.

    Why not a task awaiting ``receive()``: that is a task per stream, made before the stream's first
    token, and two more turns of the event loop, for a wait that almost always ends with the stream.
    This steps the ``receive()`` coroutine in place, as a task would, and again from a callback on
    the future it waits for (as :mod:`mockserver.engine.stream_writes` does with a held-back write).
    :meth:`stop` closes it, so nothing of it outlives the reply.

    ``args`` rather than a closure over them: a watch lives as long as its stream, and a lambda and
    its cells are more objects per open stream for the garbage collector's passes to walk.
    """

    __slots__ = ("_args", "_coro", "_on_gone", "_receive", "_stopped", "_waiting")

    def __init__(self, receive: Receive, on_gone: Callable[..., None], *args: Any) -> None:
        super().__init__()
        self._receive = receive
        self._on_gone = on_gone
        self._args = args
        self._coro: Coroutine[Any, Any, Message] | None = None
        self._waiting: asyncio.Future[Any] | None = None
        self._stopped = False
        self._step(None)

    def _step(self, _: object) -> None:
        if self._stopped:  # a step the loop had already scheduled when the watch was stopped
            return
        self._waiting = None
        while True:
            if self._coro is None:
                self._coro = self._receive()  # type: ignore[assignment]
            try:
                waiting = self._coro.send(None)  # type: ignore[union-attr]
            except StopIteration as stop:
                self._coro = None
                if stop.value["type"] == "http.disconnect":
                    break
                continue  # a message other than the end (more of a body nobody reads): wait for the next
            except (Exception, asyncio.CancelledError):
                self._coro = None
                break  # receive failed: the connection is no use any more
            if waiting is None:  # a bare yield (``asyncio.sleep(0)``): on at the loop's next turn
                asyncio.get_running_loop().call_soon(self._step, None, context=_STEPS)
            else:  # a future: on when it is done. Clear its "awaited" mark, as a task would.
                waiting._asyncio_future_blocking = False
                waiting.add_done_callback(self._step, context=_STEPS)
                self._waiting = waiting
            return
        self._went()
        self._on_gone(*self._args)

    def stop(self) -> None:
        """Stop watching: the ``receive()`` under way is closed (its ``finally`` blocks run), and a step
        already scheduled (its future was done just before) does nothing: no other ``receive()`` starts."""
        self._stopped = True
        if self._waiting is not None:
            self._waiting.remove_done_callback(self._step)
            self._waiting = None
        if self._coro is not None:
            coro, self._coro = self._coro, None
            coro.close()


class ClientWatch(Protocol):
    """What a stream's handler holds of its watch: :func:`watch_client` gives one."""

    def left(self) -> asyncio.Future[None]: ...

    def stop(self) -> None: ...


def watch_client(
    receive: Receive, writer: DirectWriter | None, on_gone: Callable[[Any], None], subject: object
) -> ClientWatch:
    """Call ``on_gone(subject)`` once the client has gone: a :class:`CycleWatch` on the request cycle of
    ``writer`` (uvicorn's own connection, when the server has a direct writer for it), else a
    :class:`DisconnectWatch` stepping ``receive``. The request's body must have been read already."""
    if writer is not None:
        event = writer.cycle.message_event
        if type(event) is asyncio.Event and type(getattr(event, "_waiters", None)) is collections.deque:
            return CycleWatch(writer.cycle, on_gone, subject)
    return DisconnectWatch(receive, on_gone, subject)


class CycleWatch(_Watch):
    """Calls ``on_gone(subject)`` once, when uvicorn's request cycle ``cycle`` sees its client gone.

    What uvicorn's ``receive()`` does, once the body is read, without its coroutines: while the client is
    there and the reply not complete, it resumes reading the connection (a paused one would not see the
    client close it) and waits on the cycle's ``message_event``, which uvicorn sets when the connection is
    lost (``disconnected``) and when the reply is complete; then it clears the event, and says the client
    has gone if the cycle is disconnected or its reply complete, or else (more of a body nobody reads)
    lets go of what came and waits again.

    The wait: the watch itself stands in the event's waiters. ``asyncio.Event.set`` calls ``set_result``
    on each waiter that is not ``done()``; this one then takes its turn on the loop, as a waiting
    ``receive()`` would have (so ``on_gone`` never runs inside uvicorn's ``connection_lost``), and stays
    among the waiters until :meth:`stop`. :func:`watch_client` uses it only where the event is an
    ``asyncio.Event`` keeping its waiters in a deque, as every CPython release from 3.10 on does.
    """

    __slots__ = ("_cycle", "_on_gone", "_stopped", "_subject")

    def __init__(self, cycle: Any, on_gone: Callable[[Any], None], subject: object) -> None:
        super().__init__()
        self._cycle = cycle
        self._on_gone = on_gone
        self._subject = subject
        self._stopped = False
        if cycle.disconnected or cycle.response_complete:  # receive() would answer at once
            self._leave()
            return
        event = cycle.message_event
        if event.is_set():  # a message came that nobody read (receive() would clear it and wait again)
            event.clear()
        cycle.flow.resume_reading()
        event._waiters.append(self)

    # -- what asyncio.Event asks of its waiters ---------------------------------------------------

    def done(self) -> bool:
        return self._stopped or self.gone

    def set_result(self, _: object) -> None:
        asyncio.get_running_loop().call_soon(self._woken, context=_STEPS)

    # ---------------------------------------------------------------------------------------------

    def _woken(self) -> None:
        if self._stopped or self.gone:  # stopped since the event was set
            return
        cycle = self._cycle
        cycle.message_event.clear()
        if cycle.disconnected or cycle.response_complete:
            self._leave()
        else:  # more of a body nobody reads: dropped, as receive() would hand it over; wait for the next
            cycle.body = bytearray()
            cycle.flow.resume_reading()

    def _leave(self) -> None:
        self._forget()
        self._went()
        self._on_gone(self._subject)

    def _forget(self) -> None:
        waiters = self._cycle.message_event._waiters
        if self in waiters:
            waiters.remove(self)

    def stop(self) -> None:
        """Stop watching: the watch leaves the event's waiters, and a wake already on its way does nothing."""
        if not self._stopped:
            self._stopped = True
            self._forget()
