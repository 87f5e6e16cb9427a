"""Ending the streams in flight when the server stops.

Every stream the server is pacing out registers a :class:`Stream` in the server's
:class:`ActiveStreams` for its lifetime. When a stopping server's grace period is over,
:meth:`ActiveStreams.end_all` ends each of them cleanly: one OpenAI-shaped error event
(:func:`shutdown_event`), then the end of the body. The stream's own ``finally`` blocks
run, so its capacity slot is given back and the journal records the exchange. (Held
non-streaming replies have their own registry, :mod:`mockserver.service.inflight`.)

How a stream is interrupted costs nothing per token: it marks itself *waiting* while it
awaits its next event (a pacing sleep). :meth:`ActiveStreams.end_all` cancels the task of
a waiting stream, which the stream catches and turns into its final event; a stream that
is busy sending sees ``stop_requested`` before it asks for the next event. Nothing else
is cancelled, so the cancellation always lands where it is caught. Call it on the
server's event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from mockserver.engine.streaming import data_event, typed_event

SHUTDOWN_CODE = "server_shutting_down"
SHUTDOWN_MESSAGE = "The server is shutting down and could not finish this reply. Please retry the request."


@dataclass(eq=False)
class Stream:
    """One stream in flight. ``waiting`` is True while it awaits its next event."""

    task: asyncio.Task[object] | None
    waiting: bool = False
    stop_requested: bool = False


@dataclass
class ActiveStreams:
    """The streams in flight in this process, so a stopping server can end them with a final event."""

    _replies: set[Stream] = field(default_factory=set)
    stopping: bool = False

    def __len__(self) -> int:
        return len(self._replies)

    @contextmanager
    def track(self) -> Iterator[Stream]:
        """Register the stream served by the current task for the duration of the block."""
        reply = Stream(asyncio.current_task())
        if self.stopping:
            reply.stop_requested = True
        self._replies.add(reply)
        try:
            yield reply
        finally:
            self._replies.discard(reply)

    def end_all(self) -> int:
        """Ask every stream in flight to end now with its final event. Returns how many were asked."""
        self.stopping = True
        replies = list(self._replies)
        for reply in replies:
            reply.stop_requested = True
            if reply.waiting and reply.task is not None:
                reply.task.cancel()
        return len(replies)


def stopped_by_server(reply: Stream) -> bool:
    """After a ``CancelledError``: was it :meth:`ActiveStreams.end_all`? If so, take the cancellation back.

    A cancellation from anywhere else (the client went away, the server is killed) is not ours
    to swallow, and the caller re-raises it.
    """
    if not reply.stop_requested or reply.task is None:
        return False
    reply.task.uncancel()
    return True


def shutdown_event(responses: bool, sequence_number: int) -> bytes:
    """The last event of a stream the server ends because it is stopping (WIRE.md §8.4).

    Chat Completions: ``data: {"error": {...}}``, which both SDKs raise as ``APIError``.
    Responses API: the documented ``event: error`` with flat fields, which the SDKs yield.
    """
    if not responses:
        return data_event(
            {"error": {"message": SHUTDOWN_MESSAGE, "type": "server_error", "param": None, "code": SHUTDOWN_CODE}}
        )
    return typed_event(
        {
            "type": "error",
            "sequence_number": sequence_number,
            "code": SHUTDOWN_CODE,
            "message": SHUTDOWN_MESSAGE,
            "param": None,
        }
    )
