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
from collections.abc import Callable, Iterator

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from mockserver.api.asgi.disconnect_watch import watch_client
from mockserver.api.asgi.transport import DirectWriter
from mockserver.engine.dialects import CHAT, Dialect
from mockserver.engine.scheduler import StreamScheduler
from mockserver.engine.streaming import DROP_GRACE_S, DROPPED, SSE_HEADERS, Item, close_items


class EventStreamResponse(Response):
    """A ``text/event-stream`` reply whose events the server's scheduler plays.

    The handler sends the start, registers the stream, and waits for it to be over. Under uvicorn's
    httptools server the connection's direct writer is corked from the start until the stream is open
    (:meth:`~mockserver.api.asgi.transport.DirectWriter.cork`): a head it writes itself and the events
    due as the stream opens (a first token due at once; at time scale 0 every event, up to what one write
    holds) go out in one write. The end of the body follows through ``send``, after the journal.
    While the stream plays, a watch on the server's own connection
    (:func:`~mockserver.api.asgi.disconnect_watch.watch_client`) listens for the client going away,
    which cancels the stream at once (even while it waits for a deadline or a stall), so nothing keeps
    running behind it.
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
        state = scope.get("state") or {}
        server_send = state.get("server_send") or send
        writer: DirectWriter | None = state.get("direct_writer")
        scheduler = self.scheduler
        if writer is not None:  # the head and what is due as the stream opens go out in one write
            writer.cork()
        try:
            try:
                await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
            except OSError:  # the client went away before the reply started
                close_items(self.source)
                return
            stream = scheduler.open(
                self.source,
                send_body=server_send,
                send_end=send,
                on_drop=self.on_drop,
                path=scope.get("path", ""),
                dialect=self.dialect,
                write_body=None if writer is None else writer.write,
            )
        finally:
            if writer is not None:
                writer.uncork()
        # The stream has all it needs of the reply: let go of it (its producer, its headers) while the stream
        # plays, as its caller does (DirectRoutes): more objects per open stream for the collector's passes.
        del self
        if stream.done.done() and stream.done.result() != DROPPED:
            return  # everything was due at once (time scale 0): no need to watch the client
        # The server's own receive when the app's outermost layer gave it (the body is read by now: the
        # middleware's receive, which counts a body as it arrives, has nothing left to do).
        watch = watch_client(state.get("server_receive") or receive, writer, scheduler.client_left, stream)
        try:
            outcome = await stream.done
            if outcome == DROPPED:
                # Let the server see the closed connection before returning, so it doesn't log
                # a reply that ended without completing (a stream dropped as it opened too).
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(watch.left(), DROP_GRACE_S)
        finally:
            watch.stop()
            scheduler.cancel(stream)
