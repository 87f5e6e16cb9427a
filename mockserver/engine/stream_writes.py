"""Writing to a stream without awaiting, and ending it: the half of the stream scheduler that
talks to the connection (:class:`StreamWrites`, which :class:`~.scheduler.StreamScheduler` extends).

uvicorn's ``send`` only suspends while the transport is paused (the client's buffer is full), so
a write is stepped once in place and only a held-back one gets a task of its own; the stream is
parked (``blocked``) meanwhile. (The server's other hand-stepped coroutine, the disconnect watch, is
in :mod:`mockserver.api.asgi`; this one stays with the scheduler it serves, as the engine imports
nothing above it, and it is plain Python: the coroutine protocol, no server's internals.)
An end goes through the middleware, so every observer sees it.
Whatever ends a stream closes its producer (its ``finally`` blocks give its capacity back) and
lets go of what it held. A write that raises something a client does not cause ends its stream
alone, with its API's server error event.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from mockserver.engine.active_stream import ActiveStream, ReplyLimits
from mockserver.engine.pacing import Clock
from mockserver.engine.streaming import CLIENT_LEFT, COMPLETED, DROPPED, FAILED, FINISHED, Item

logger = logging.getLogger("mockserver")


class StreamWrites:
    """Writes and ends the streams of a :class:`~.scheduler.StreamScheduler` (its base class)."""

    clock: Clock
    active: set[ActiveStream]
    stopping: bool
    ends_in_task: bool
    on_change: Callable[[], None] | None
    _heap: list[tuple[float, int, ActiveStream]]
    limits: ReplyLimits
    _dead: int

    def cancel(self, stream: ActiveStream, outcome: str = CLIENT_LEFT) -> None:
        """Stop a stream now (its client left): nothing more is written and its producer is closed.

        A stream whose every event is out, waiting for its end (see the scheduler's tick), ends as
        it would have, COMPLETED: its reply was whole, and the journal and the ledger say so."""
        if stream.ending:
            self._end_waiting(stream)
        elif not stream.over:
            self._close(stream, outcome)

    def _schedule(self, stream: ActiveStream, due: float) -> None:
        raise NotImplementedError  # the scheduler's: wait for ``due``

    def _finish(self, stream: ActiveStream, final: Callable[[ActiveStream], bytes | None] | None) -> None:
        if stream.ending:  # every event is out already: it ends as it would have
            self._end_waiting(stream)
            return
        if stream.blocked:  # the client is not reading: nothing more can reach it
            self._close(stream, FINISHED)
            return
        body = final(stream) if final is not None else None
        if body:
            stream.events_sent += 1
            self._write(stream, body)
        if stream.blocked:
            self._close(stream, FINISHED)
        elif not stream.over:
            self._end(stream, FINISHED)

    def _end_waiting(self, stream: ActiveStream) -> None:
        """End a stream whose every event is out and whose end was waiting (see :meth:`_tick`): COMPLETED."""
        stream.ending = False
        self._end(stream, COMPLETED)

    def _write(self, stream: ActiveStream, body: bytes) -> None:
        try:
            if stream.write_body is not None and stream.write_body(body):
                return
            send = stream.send_body({"type": "http.response.body", "body": body, "more_body": True})
        except Exception as exc:
            self._write_failed(stream, exc)
            return
        self._step(stream, send, None)

    def _write_failed(self, stream: ActiveStream, exc: Exception) -> None:
        """A write raised something no client causes (a bug): end this stream alone, cleanly.

        It gets the server error event of its API, then its end (so its capacity is given back
        and the journal records it, not completed); if writing that fails too, it is closed."""
        if stream.over:
            return
        logger.error("writing to a stream failed on %s; that stream ends", stream.path, exc_info=exc)
        if stream.failed_write:
            self._close(stream, FAILED)
            return
        stream.failed_write = True
        stream.blocked = False
        stream.write_body = None  # the error event goes through the server's own send
        self._finish(stream, _write_failed_event)

    def _end(self, stream: ActiveStream, outcome: str) -> None:
        """End the response; the stream is over (and its handler may return) once the end is written.

        With a shared store (``ends_in_task``), the end goes through the middleware, whose observers
        await the store (the ledger and the journal on Redis), and that needs a task. Inside one (a
        stream whose events were all due at once, in its handler's ``open``) the end is written at
        once; from the tick, a plain timer callback, or while the server stops, a task of its own
        writes it. In memory, the end is written at once from anywhere, as nothing in it waits."""
        message = {"type": "http.response.body", "body": b"", "more_body": False}
        if not self.ends_in_task or (asyncio.current_task() is not None and not self.stopping):
            self._step(stream, stream.send_end(message), outcome)
            return
        self.active.discard(stream)
        stream.blocked = True
        task = asyncio.ensure_future(self._write_end(stream, message, outcome))
        task.add_done_callback(_log_failure)

    async def _write_end(self, stream: ActiveStream, message: dict[str, Any], outcome: str) -> None:
        try:
            await stream.send_end(message)
        except OSError:  # the client went away just now
            outcome = CLIENT_LEFT
        finally:  # whatever happened, the stream is over and its handler returns
            self.cancel(stream, outcome)

    def _step(self, stream: ActiveStream, coro: Awaitable[None], ending: str | None) -> None:
        """Run ``send`` without a task: it returns at once unless the server applies back-pressure.

        uvicorn's ``send`` only suspends while the transport is paused (the client's buffer is
        full). Then the stream is parked and the rest of the write runs in a task of its own.
        ``ending`` is the outcome to close the stream with once this (last) write is done.
        """
        try:
            waiting = coro.send(None)  # type: ignore[attr-defined]
        except StopIteration:
            if ending is not None:
                self._close(stream, ending)
            return
        except OSError:  # the client went away mid-write
            self.cancel(stream)
            return
        except Exception as exc:
            self._write_failed(stream, exc)
            return
        stream.blocked = True
        task = asyncio.ensure_future(self._finish_write(stream, coro, waiting, ending))
        task.add_done_callback(_log_failure)

    async def _finish_write(self, stream: ActiveStream, coro: Any, waiting: Any, ending: str | None) -> None:
        try:
            while True:
                # A future the send yielded (the transport resuming). It is still marked as being
                # awaited by whoever stepped the coroutine (us): clear that, as a Task would.
                waiting._asyncio_future_blocking = False
                await waiting
                try:
                    waiting = coro.send(None)
                except StopIteration:
                    break
        except OSError:
            self.cancel(stream)
            return
        except Exception as exc:
            stream.blocked = False
            self._write_failed(stream, exc)
            return
        finally:
            if stream.over:
                coro.close()
        stream.blocked = False
        if ending is not None:
            self.cancel(stream, ending)
        elif not stream.over:
            self._schedule(stream, self.clock.now())

    def _forget(self, stream: ActiveStream) -> None:
        """A stream is over: its heap entry, if it has one, is skipped when popped, at no cost.
        Once such entries make up half the heap, the heap is rebuilt without them, so a crowd of
        streams cancelled while they wait for a distant deadline (a 600 s TTFT) holds nothing."""
        if stream.due > self.clock.now():
            self._dead += 1
            heap = self._heap
            if self._dead > 64 and 2 * self._dead > len(heap):
                heap[:] = [entry for entry in heap if not entry[2].over]
                heapq.heapify(heap)
                self._dead = 0

    def _drop(self, stream: ActiveStream) -> None:
        try:
            if stream.on_drop is None:
                raise ConnectionAbortedError("mockserver fault: connection dropped")
            stream.on_drop()
        except Exception as exc:
            self._close(stream, FAILED, exc)
            return
        self._close(stream, DROPPED)

    def _close(self, stream: ActiveStream, outcome: str, error: BaseException | None = None) -> None:
        stream.over = True
        self.active.discard(stream)
        self.limits.ended(stream, len(self.active))
        if self.on_change is not None:
            self.on_change()
        source = stream.source
        # What the stream held goes now, though its heap entry waits (see _forget): the producer
        # (its plan and text), its run, the connection's functions.
        stream.source, stream.run = _NOTHING, None
        stream.write_body = stream.on_drop = None
        stream.send_body = stream.send_end = _nowhere
        self._forget(stream)
        close = getattr(source, "close", None)
        if close is not None:
            try:
                close()  # runs the producer's finally blocks: capacity is released there
            except Exception:
                logger.exception("closing a stream producer failed on %s", stream.path)
        if not stream.done.done():
            if error is not None:
                stream.done.set_exception(error)
            else:
                stream.done.set_result(outcome)


_NOTHING: Iterator[Item] = iter(())
WRITE_FAILED_CODE = "server_error"
WRITE_FAILED_MESSAGE = "The server failed while writing this reply and ended it. Please retry the request."


async def _nowhere(message: dict[str, Any]) -> None:
    """Where a stream that is over sends: nowhere."""


def _write_failed_event(stream: ActiveStream) -> bytes:
    return stream.dialect.server_error_event(WRITE_FAILED_CODE, WRITE_FAILED_MESSAGE, stream.events_sent)


def _log_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.error("a held-back stream write failed", exc_info=task.exception())
