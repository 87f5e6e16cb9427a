"""The ``text/event-stream`` reply: the HTTP side of a stream the server's scheduler plays.

The events themselves are a plain iterator (:mod:`mockserver.engine.streaming`), paced and written
by the :class:`~mockserver.engine.scheduler.StreamScheduler`, framed by the stream's
:class:`~mockserver.engine.dialects.Dialect`; faults wrap that iterator
(:func:`mockserver.harness.faults.midstream.with_fault`) before it gets here. This class only starts
the reply, hands the iterator to the scheduler and watches for the client going away.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from mockserver.engine.dialects import CHAT, Dialect
from mockserver.engine.scheduler import StreamScheduler
from mockserver.engine.streaming import DROP_GRACE_S, DROPPED, SSE_HEADERS, Item, close_items


class EventStreamResponse(Response):
    """A ``text/event-stream`` reply whose events the server's scheduler plays.

    The handler sends the start, registers the stream, and waits for it to be over; a
    :class:`DisconnectWatch` meanwhile listens for the client going away, which cancels the stream
    at once (even while it waits for a deadline or a stall), so nothing keeps running behind it.
    """

    media_type = "text/event-stream"
    _plain_headers: tuple[tuple[bytes, bytes], ...] | None = None

    def __init__(
        self,
        source: Iterator[Item],
        scheduler: StreamScheduler,
        *,
        dialect: Dialect = CHAT,
        on_drop: Callable[[], None] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.source = source
        self.dialect = dialect
        self.scheduler = scheduler
        self.on_drop = on_drop
        self.status_code = 200
        self.background = None
        if headers:
            self.init_headers({**SSE_HEADERS, **headers})
        else:  # the usual reply: its headers are encoded once per process
            cls = type(self)
            if cls._plain_headers is None:
                self.init_headers(SSE_HEADERS)
                cls._plain_headers = tuple(self.raw_headers)
            self.raw_headers = [*cls._plain_headers]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        server_send = scope.get("state", {}).get("server_send") or send
        try:
            await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        except OSError:  # the client went away before the reply started
            close_items(self.source)
            return
        stream = self.scheduler.open(
            self.source,
            send_body=server_send,
            send_end=send,
            on_drop=self.on_drop,
            path=scope.get("path", ""),
            dialect=self.dialect,
            write_body=scope.get("state", {}).get("write_body"),
        )
        if stream.done.done():  # everything was due at once (time scale 0): no need to watch the client
            stream.done.result()
            return
        watch = DisconnectWatch(receive, lambda: self.scheduler.cancel(stream))
        try:
            outcome = await stream.done
            if outcome == DROPPED:
                # Let the server see the closed connection before returning, so it doesn't log
                # a reply that ended without completing.
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(watch.left(), DROP_GRACE_S)
        finally:
            watch.stop()
            self.scheduler.cancel(stream)


class DisconnectWatch:
    """Calls ``on_gone()`` once, when ``receive`` says the client went away (``http.disconnect``), or fails.

    Why not a task awaiting ``receive()``: that is a task per stream, made before the stream's first
    token, and two more turns of the event loop, for a wait that almost always ends with the stream.
    This steps the ``receive()`` coroutine in place, as a task would, and again from a callback on
    the future it waits for (as :mod:`mockserver.engine.stream_writes` does with a held-back write).
    :meth:`stop` closes it, so nothing of it outlives the reply.
    """

    __slots__ = ("_coro", "_left", "_on_gone", "_receive", "_stopped", "_waiting", "gone")

    def __init__(self, receive: Receive, on_gone: Callable[[], None]) -> None:
        self._receive = receive
        self._on_gone = on_gone
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
                asyncio.get_running_loop().call_soon(self._step, None)
            else:  # a future: on when it is done. Clear its "awaited" mark, as a task would.
                waiting._asyncio_future_blocking = False
                waiting.add_done_callback(self._step)
                self._waiting = waiting
            return
        self.gone = True
        if self._left is not None and not self._left.done():
            self._left.set_result(None)
        self._on_gone()

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
