"""Watching for the client going away during a stream, by stepping ``receive()`` by hand.

A stream's reply must stop at once when its client leaves, even while it waits for a distant first
token. The usual way, a task awaiting ``receive()``, costs a task per stream, made before the stream's
first token, and two more turns of the event loop, for a wait that almost always ends with the stream.
:class:`DisconnectWatch` drives the coroutine itself, through the coroutine protocol
(``send(None)``, a done callback on the future it yields), as a task would.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Coroutine
from typing import Any

from starlette.types import Message, Receive

# The context every watch's later steps run in. A callback given no context runs in a copy of the caller's,
# made when it is added: one more object per open stream for the garbage collector's passes to walk, for
# a ``receive()`` that reads no context variable. Callbacks run one at a time, so one context serves all.
_STEPS = contextvars.Context()


class DisconnectWatch:
    """Calls ``on_gone(*args)`` once, when ``receive`` says the client went away (``http.disconnect``), or fails.

    Why not a task awaiting ``receive()``: that is a task per stream, made before the stream's first
    token, and two more turns of the event loop, for a wait that almost always ends with the stream.
    This steps the ``receive()`` coroutine in place, as a task would, and again from a callback on
    the future it waits for (as :mod:`mockserver.engine.stream_writes` does with a held-back write).
    :meth:`stop` closes it, so nothing of it outlives the reply.

    ``args`` rather than a closure over them: a watch lives as long as its stream, and a lambda and
    its cells are more objects per open stream for the garbage collector's passes to walk.
    """

    __slots__ = ("_args", "_coro", "_left", "_on_gone", "_receive", "_stopped", "_waiting", "gone")

    def __init__(self, receive: Receive, on_gone: Callable[..., None], *args: Any) -> None:
        self._receive = receive
        self._on_gone = on_gone
        self._args = args
        self._coro: Coroutine[Any, Any, Message] | None = None
        self._waiting: asyncio.Future[Any] | None = None
        self._left: asyncio.Future[None] | None = None
        self._stopped = False
        self.gone = False
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
        self.gone = True
        if self._left is not None and not self._left.done():
            self._left.set_result(None)
        self._on_gone(*self._args)

    def left(self) -> asyncio.Future[None]:
        """A future that is done once the client has gone."""
        if self._left is None:
            self._left = asyncio.get_running_loop().create_future()
            if self.gone:
                self._left.set_result(None)
        return self._left

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
