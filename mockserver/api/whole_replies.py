"""Serving a request whose reply is one JSON document made at once: embeddings and moderations.

Such a request is admitted as an inference request is (model, key, quota, rate windows: see
:mod:`mockserver.service.access`), but its cost in the token window is its input alone, and its
reply is encoded before it is held: the document of 2,048 vectors of 3,072 values is tens of
megabytes, so it is encoded off the event loop, once, and sent as bytes.

The reply is held until its schedule ends, as a non-streaming chat reply is: the model's ``default``
profile's ``ttft_ms``, plus the input tokens read at its ``prefill_tokens_per_second``
(:mod:`mockserver.service.prefill`), times the time scale; ``x-mock-ttft-ms`` sets the wait exactly.
Faults apply as to any inference request (:mod:`mockserver.harness.faults.injection`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import anyio
import orjson
from fastapi import Request
from starlette.responses import Response, StreamingResponse

from mockserver.api import serving
from mockserver.api.admitting import record_admission
from mockserver.api.handler_inputs import server_state
from mockserver.api.middleware import exchange_of, request_headers
from mockserver.config.fixture import Account, ModelKind
from mockserver.engine.dialects import CHAT
from mockserver.engine.pacing import Pacer
from mockserver.harness.faults import injection
from mockserver.service import access, prefill
from mockserver.service.access import Admission
from mockserver.service.exchange import Usage

Plan = TypeVar("Plan")

# A reply of up to this many vector values is encoded on the event loop (well under a millisecond);
# larger ones in a thread, so /health and the streams in flight keep their turns.
THREAD_FROM_VALUES = 20_000
WRITE_BYTES = 1 << 20  # a larger reply is written a mebibyte at a time


async def admit(
    request: Request,
    account: Account,
    *,
    model: str,
    kind: ModelKind,
    raw_body: Any,
    plan: Callable[[Admission], Plan],
    input_tokens: Callable[[Plan], int],
    in_thread: bool,
    before_plan: Callable[[Admission], Awaitable[None]] | None = None,
) -> tuple[Admission, Plan]:
    """Resolve the model (of ``kind``), await ``before_plan`` (which may refuse it), plan the reply
    (in a worker thread with ``in_thread``), then count its input tokens against the rate windows."""
    state = server_state(request)
    exchange = exchange_of(request.scope)
    resolved = access.resolve(
        state.fixture, account, request_headers(request.scope), model, None, received_at=exchange.started_at, kind=kind
    )
    record_admission(exchange, resolved, raw_body, stream=False)
    if before_plan is not None:
        await before_plan(resolved)
    if in_thread:
        planned = await anyio.to_thread.run_sync(plan, resolved)
    else:
        planned = plan(resolved)
    resources = access.Resources(exchange, state.store, state.clock, state.settings.time_scale)
    admission = await access.take_resources(
        state.fixture, resolved, request=resources, requested_tokens=input_tokens(planned)
    )
    return admission, planned


def encode(document: dict[str, Any]) -> list[bytes]:
    """The reply's JSON, in pieces whose concatenation is the document; numpy arrays are written as
    their values.

    A list is encoded one item at a time, each its own piece: orjson holds the GIL while it works,
    and one call over 2,048 vectors (or one join of their 128 MiB) would keep the event loop out for
    a good part of a second; one vector takes well under a millisecond.
    """
    pieces = [b"{"]
    for index, (name, value) in enumerate(document.items()):
        pieces.append((b"," if index else b"") + orjson.dumps(name) + b":")
        if isinstance(value, list):
            pieces.append(b"[")
            for position, item in enumerate(value):
                pieces.append((b"," if position else b"") + orjson.dumps(item, option=orjson.OPT_SERIALIZE_NUMPY))
            pieces.append(b"]")
        else:
            pieces.append(orjson.dumps(value, option=orjson.OPT_SERIALIZE_NUMPY))
    pieces.append(b"}")
    return pieces


async def encode_off_loop(document: Callable[[], dict[str, Any]], values: int) -> list[bytes]:
    """:func:`encode` of ``document()``, in a thread past :data:`THREAD_FROM_VALUES` vector values."""
    if values > THREAD_FROM_VALUES:
        return await anyio.to_thread.run_sync(lambda: encode(document()))
    return encode(document())


async def respond(request: Request, admission: Admission, *, input_tokens: int, body: list[bytes]) -> Response:
    """Hold the encoded ``body`` (:func:`encode`) for its schedule, then send it; or serve the request's fault."""
    from mockserver.replies.planner import whole_reply_schedule  # with the first reply, not at start-up

    state = server_state(request)
    exchange = exchange_of(request.scope)
    exchange.usage = Usage(input_tokens=input_tokens)
    admission, seconds = prefill.with_prefill(admission, input_tokens)
    exchange.prefill_ms = round(seconds * 1000, 3)
    schedule = whole_reply_schedule(admission, state.clock, state.settings.time_scale)
    fault = await injection.fault_for(state, request, exchange)
    if fault is not None:
        reply = await injection.respond_with(
            fault,
            request,
            state=state,
            schedule=schedule,
            stream=False,
            dialect=CHAT,  # never used: the reply is not a stream
            events=lambda pacer: iter(()),
            body=lambda: _reply(body),  # as encoded: never parsed and written again on the event loop
            hold=lambda waiting: serving.hold_reply(request, waiting),
        )
        # A reply that only arrives late is still delivered whole, so it counts (see serving.respond).
        assert not isinstance(reply, injection.FaultedStream)  # only a stream comes back as one
        if fault.spec.delivers_whole_reply and not exchange.disconnected:
            exchange.completed = True
        return reply
    cut_short = await serving.hold_reply(request, Pacer(state.clock, schedule).wait_for_end())
    if cut_short is not None:
        return cut_short
    exchange.completed = True
    return _reply(body)


def _reply(body: list[bytes]) -> Response:
    """The response that sends the encoded ``body``: at once, or a mebibyte at a time past :data:`WRITE_BYTES`."""
    size = sum(len(piece) for piece in body)
    if size <= WRITE_BYTES:
        return Response(b"".join(body), media_type="application/json")
    # Piece by piece, so the event loop never copies a reply of a hundred megabytes in one go, and
    # writes no faster than the client reads (uvicorn waits for the socket to drain).
    return StreamingResponse(_pieces(body), media_type="application/json", headers={"content-length": str(size)})


async def _pieces(body: list[bytes]) -> AsyncIterator[bytes]:
    batch: list[bytes] = []
    batched = 0
    for piece in body:
        batch.append(piece)
        batched += len(piece)
        if batched >= WRITE_BYTES:
            yield b"".join(batch)
            batch, batched = [], 0
    if batch:
        yield b"".join(batch)
