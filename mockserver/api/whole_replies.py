"""Serving a request whose reply is one JSON document made at once: embeddings and moderations.

Such a request is admitted as an inference request is (model, key, quota, rate windows: see
:mod:`mockserver.service.access`), but its cost in the token window is its input alone, and its
reply is encoded before it is held: the document of 2,048 vectors of 3,072 values is tens of
megabytes, so it is encoded off the event loop, once, and sent as bytes.

The reply is held until its schedule ends, as a non-streaming chat reply is: the model's ``default``
profile's ``ttft_ms``, plus the input tokens at its ``tokens_per_second`` (its reading speed), times
the time scale. Faults apply as to any inference request (:mod:`mockserver.harness.faults.injection`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import orjson
from fastapi import Request
from starlette.responses import Response

from mockserver.api import serving
from mockserver.api.middleware import exchange_of, request_headers
from mockserver.api.routing import server_state
from mockserver.config.fixture import Account, ModelKind
from mockserver.engine.pacing import Pacer, Schedule
from mockserver.harness.faults import injection
from mockserver.service import access
from mockserver.service.access import Admission
from mockserver.service.exchange import Usage

Plan = TypeVar("Plan")

# A reply of up to this many vector values is encoded on the event loop (well under a millisecond);
# larger ones in a thread, so /health and the streams in flight keep their turns.
THREAD_FROM_VALUES = 20_000


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
) -> tuple[Admission, Plan]:
    """Resolve the model (of ``kind``), plan the reply (in a worker thread with ``in_thread``),
    then count its input tokens against the rate windows."""
    state = server_state(request)
    exchange = exchange_of(request.scope)
    resolved = access.resolve(
        state.fixture, account, request_headers(request.scope), model, None, received_at=exchange.started_at, kind=kind
    )
    serving.record_admission(request, resolved, raw_body, stream=False)
    if in_thread:
        planned = await anyio.to_thread.run_sync(plan, resolved)
    else:
        planned = plan(resolved)
    admission = await access.take_resources(state.fixture, resolved, requested_tokens=input_tokens(planned))
    return admission, planned


def encode(document: dict[str, Any]) -> bytes:
    """The reply's JSON; numpy arrays are written as their values."""
    return orjson.dumps(document, option=orjson.OPT_SERIALIZE_NUMPY)


async def encode_off_loop(document: Callable[[], dict[str, Any]], values: int) -> bytes:
    """:func:`encode` of ``document()``, in a thread past :data:`THREAD_FROM_VALUES` vector values."""
    if values > THREAD_FROM_VALUES:
        return await anyio.to_thread.run_sync(lambda: encode(document()))
    return encode(document())


async def respond(request: Request, admission: Admission, *, input_tokens: int, body: bytes) -> Response:
    """Hold the encoded ``body`` for its schedule, then send it; or serve the request's fault."""
    state = server_state(request)
    exchange = exchange_of(request.scope)
    exchange.usage = Usage(input_tokens=input_tokens)
    profile = admission.profile
    schedule = Schedule.build(
        start=admission.start_time(state.clock),
        ttft=profile.ttft_ms / 1000 + input_tokens / profile.tokens_per_second,
        tokens_per_second=profile.tokens_per_second,
        total_tokens=0,
        time_scale=state.settings.time_scale,
    )
    fault = await injection.choose(state, request, exchange)
    if fault is not None:
        reply = await injection.respond_with(
            fault,
            request,
            state=state,
            schedule=schedule,
            stream=False,
            events=lambda pacer: iter(()),
            body=lambda: orjson.loads(body),
            hold=lambda waiting: serving.hold_reply(request, waiting),
        )
        # A reply that only arrives late is still delivered whole, so it counts (see serving.respond).
        if fault.spec.delivers_whole_reply and not exchange.disconnected:
            exchange.completed = True
        return reply
    cut_short = await serving.hold_reply(request, Pacer(state.clock, schedule).wait_for_end())
    if cut_short is not None:
        return cut_short
    exchange.completed = True
    return Response(body, media_type="application/json")
