"""Serving one admitted inference request: record the decisions, then pace the reply out.

Chat Completions and the Responses API share this path, so both get the same
pacing, the same bookkeeping and the same streaming behaviour.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse
from starlette.responses import Response

from mockserver import faults
from mockserver.access import Admission
from mockserver.exchange import Usage
from mockserver.middleware import exchange_of
from mockserver.pacing import Pacer, Schedule
from mockserver.routes import server_state
from mockserver.streaming import EventStreamResponse


def record_admission(request: Request, admission: Admission, body: Any, stream: bool) -> None:
    exchange = exchange_of(request.scope)
    exchange.account = admission.account
    exchange.model = admission.model.id
    exchange.requested_tier = admission.tier.requested
    exchange.tier = admission.tier.tier
    exchange.downgraded = admission.tier.downgraded
    exchange.body = body
    exchange.stream = stream


async def respond(
    request: Request,
    *,
    usage: Usage,
    schedule: Schedule,
    stream: bool,
    events: Callable[[Pacer], AsyncIterator[bytes]],
    body: Callable[[], dict[str, Any]],
) -> Response:
    """Stream ``events`` on the schedule, or hold the whole ``body`` until the schedule ends.

    A request that draws a fault (header, fixture rule or probability) is served by
    :func:`mockserver.faults.respond_with` instead, for every API that comes through here.
    """
    state = server_state(request)
    exchange = exchange_of(request.scope)
    exchange.usage = usage
    fault = faults.choose(state, request, exchange)
    if fault is not None:
        return await faults.respond_with(
            fault, request, state=state, schedule=schedule, stream=stream, events=events, body=body
        )
    pacer = Pacer(state.clock, schedule)
    if stream:
        return EventStreamResponse(events(pacer))
    await pacer.wait_for_end()
    return JSONResponse(body())
