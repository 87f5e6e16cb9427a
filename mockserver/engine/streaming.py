"""Server-sent events: framing, the items a stream is made of, and the response that plays them.

Chat Completions stream ``data: <json>`` events closed by ``data: [DONE]``; the
Responses API streams ``event: <type>`` + ``data: <json>`` and no ``[DONE]``
(WIRE.md §4.3, §5.3, §6). Events are encoded with orjson straight to bytes:
this is the per-token hot path.

A stream is planned as an iterator of :data:`Item`: a ``float`` is a deadline on the
server's clock (what follows is due then), ``bytes`` an encoded event, :data:`DROP`
a request to close the connection under the reply (a fault), and a :class:`Run` a
batch of events with a deadline each (the text deltas of a long reply). Producers encode a
frame, then yield its deadline, then the frame, so the bytes are ready before they
are due. :class:`~mockserver.api.sse.EventStreamResponse` hands the iterator
to the server's :class:`~mockserver.engine.scheduler.StreamScheduler`, which plays
every open stream on one timer.

The start of the reply and its end pass through the whole middleware stack, so
every observer sees them (headers, the journal, the ledger). The events between
go straight to the server's ``send`` (``scope["state"]["server_send"]``, put there
by :func:`mockserver.api.asgi.app_patches.expose_connection_closer`): five ``send`` wrappers
that only watch for the start would otherwise run for every token.
sse-starlette would do the framing for us, but it needs a task per stream, and even fed by the one
scheduler it costs more CPU per event: ``python -m benchmarks sse_encoding`` measures it, and
docs/performance.md ("Why not sse-starlette") gives the figures and the decision.
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Iterator
from typing import Any

import orjson

DONE = b"data: [DONE]\n\n"
SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}


class Signal(enum.Enum):
    DROP = "drop"


DROP = Signal.DROP


class Run:
    """Events with a deadline each: ``frames[i]`` is due at ``dues[i]`` (non-decreasing).

    The per-token hot path of a long stream: a producer encodes a run of text events at once
    (a few dozen), and the scheduler writes each tick the ones that fell due, with a bisect
    over ``dues`` instead of pulling two items through the producer per event.
    """

    __slots__ = ("dues", "frames")

    def __init__(self, dues: list[float], frames: list[bytes]) -> None:
        self.dues = dues
        self.frames = frames

    def items(self) -> Iterator[bytes | float]:
        """The same events as plain items: each frame's deadline, then the frame."""
        for due, frame in zip(self.dues, self.frames, strict=True):
            yield due
            yield frame


Item = bytes | float | Signal | Run

# Why a stream is over: the reply went out whole, the client left, a fault dropped the
# connection, the server ended it (StreamScheduler.finish_all), or its producer failed.
COMPLETED, CLIENT_LEFT, DROPPED, FINISHED, FAILED = "completed", "client_left", "dropped", "finished", "failed"
DROP_GRACE_S = 5.0  # after a dropped connection, how long the handler waits for the server to notice


def data_event(payload: Any) -> bytes:
    """A ``data:``-only event, as Chat Completions send."""
    return b"data: " + orjson.dumps(payload) + b"\n\n"


def typed_event(payload: dict[str, Any]) -> bytes:
    """An ``event: <type>`` + ``data:`` event, as the Responses API sends."""
    kind: str = payload["type"]
    return b"event: " + kind.encode() + b"\ndata: " + orjson.dumps(payload) + b"\n\n"


def close_items(source: Iterator[Item]) -> None:
    close = getattr(source, "close", None)
    if close is not None:
        close()


@contextlib.contextmanager
def closing_items(items: Iterator[Item]) -> Iterator[Iterator[Item]]:
    """Close ``items`` (if it can be closed: a generator can) when the block ends, however it ends."""
    try:
        yield items
    finally:
        close_items(items)
