"""Serving one admitted inference request: its reply paced out, or the fault it drew.

Every inference API family comes through here (:mod:`mockserver.api.pipeline`), so all get the same
pacing, the same bookkeeping and the same streaming behaviour.

An Ultrafast request holds its capacity slot (taken at admission) for the reply's
whole life: until the non-streaming body is ready, or until the stream's generator
ends, fails or is cancelled because the client went away (the stream scheduler closes
the stream's iterator within the tick the client leaves). The slot is released in a
``finally`` here, and once more, harmlessly, when the exchange closes (for replies
that never got this far).

A non-streaming reply is held by :func:`hold_reply`, which also watches for the client
leaving, a reset, the server stopping and the reply's wall-clock limit
(:mod:`mockserver.service.inflight`): any of them ends the wait at once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from typing import Any, NamedTuple

from fastapi import Request
from fastapi.responses import JSONResponse
from starlette.responses import Response

from mockserver import errors
from mockserver.api.handler_inputs import server_state
from mockserver.api.middleware import exchange_of
from mockserver.api.sse import EventStreamResponse
from mockserver.engine.dialects import Dialect
from mockserver.engine.pacing import Clock, Pacer, Schedule
from mockserver.engine.streaming import Item, close_items
from mockserver.harness.faults import injection
from mockserver.harness.live.streams import LiveStreams
from mockserver.service import inflight
from mockserver.service.exchange import Exchange, Usage


class Reply(NamedTuple):
    """A planned reply, ready to go out: what it uses, when it is due, and how it is sent, a stream's
    events (paced by a :class:`~mockserver.engine.pacing.Pacer`) or the whole body."""

    usage: Usage
    schedule: Schedule
    events: Callable[[Pacer], Iterator[Item]]
    body: Callable[[], dict[str, Any]]


async def respond(request: Request, planned: Reply, *, stream: bool) -> Response:
    """Stream the planned reply's events on its schedule, framed by the exchange's dialect (set on
    admission: :func:`mockserver.api.admitting.admit`), or hold its whole body until the schedule ends.

    A request that draws a fault (header, fixture rule or probability) is served by
    :func:`mockserver.harness.faults.injection.respond_with` instead, for every API that comes through here.
    """
    state = server_state(request)
    exchange = exchange_of(request.scope)
    usage, schedule, events, body = planned
    exchange.usage = usage
    dialect = exchange.dialect
    fault = await injection.fault_for(state, request, exchange) if injection.may_fault(state, exchange) else None
    if fault is not None:
        reply = await injection.respond_with(
            fault,
            request,
            state=state,
            schedule=schedule,
            stream=stream,
            dialect=dialect,
            events=events,
            body=body,
            hold=lambda waiting: hold_reply(request, waiting),
        )
        # A reply that only arrives late is still delivered whole, usage included, so it counts as
        # complete; one cut short by its fault does not. The middleware releases the slot either way.
        whole = fault.spec.delivers_whole_reply and not exchange.disconnected
        if isinstance(reply, injection.FaultedStream):
            faulted = _held_until_done(reply.events, exchange) if whole else reply.events
            return EventStreamResponse(faulted, state.streams, dialect=dialect, on_drop=reply.on_drop)
        if whole:
            exchange.completed = True
        return reply
    pacer = Pacer(state.clock, schedule)
    if stream:
        live = state.live
        source = _held_until_done(events(pacer), exchange, clock=state.clock, dialect=dialect, live=live)
        live.add(exchange, schedule, source)  # for the dashboard: one dict insert, dropped at the end
        return EventStreamResponse(source, state.streams, dialect=dialect)
    try:
        cut_short = await hold_reply(request, pacer.wait_for_end())
        if cut_short is not None:
            return cut_short
        reply = JSONResponse(body())
        exchange.completed = True
        return reply
    finally:
        await exchange.capacity_released()


async def hold_reply(request: Request, waiting: Awaitable[None]) -> Response | None:
    """Wait for ``waiting`` (a non-streaming reply's schedule); None once it has ended.

    Returns the reply to send instead when the wait is cut short: nothing (journalled as 499)
    if the client left; a 503 if the server was reset or is stopping; a 504 past the
    wall-clock limit. Raised errors are rendered by the app's one error path.
    """
    state = server_state(request)
    exchange = exchange_of(request.scope)
    limit = state.settings.max_reply_seconds
    remaining = max(0.0, limit - (state.clock.now() - exchange.started_at))
    with state.replies.track() as ended:
        outcome = await inflight.hold(waiting, client_left=lambda: client_left(request), ended=ended, limit_s=remaining)
    if outcome == "done":
        return None
    if outcome == "left":
        exchange.disconnected = True
        return Response(status_code=inflight.CLIENT_CLOSED_STATUS)
    if outcome == "time_limit":
        raise errors.reply_time_limit(limit)
    raise errors.server_reset() if outcome == "reset" else errors.server_shutting_down()


async def client_left(request: Request) -> None:
    """Return once the client has closed the connection (the body was read already, so only that can come)."""
    await inflight.client_left(request.receive)


def _held_until_done(
    events: Iterator[Item],
    exchange: Exchange,
    *,
    clock: Clock | None = None,
    dialect: Dialect | None = None,
    live: LiveStreams | None = None,
) -> Iterator[Item]:
    """Pass the stream through; mark it complete only if every event went out; always release the slot.

    With a ``clock`` and the stream's ``dialect``, it notes when the first token event and the end went
    out, for the metrics' TTFT and achieved-rate histograms (looking at events only until the first
    token: no cost after).

    The scheduler closes this iterator the moment the stream is over, however it ends (the client
    leaving, or the server stopping, which first sends a final error event: see
    :meth:`mockserver.engine.scheduler.StreamScheduler.end_all`), so the ``finally`` gives the
    Ultrafast slot back: the store call starts within that tick, and is done a round trip later;
    the stream leaves ``live`` (the dashboard's rows) there too. The stream's objects are kept as
    plain arguments, not in a closure: each cell would be one more object per open stream for the
    garbage collector's passes to walk.
    """
    try:
        try:
            if clock is not None and dialect is not None:
                for item in events:
                    yield item
                    if item.__class__ is bytes and dialect.is_token_event(item):
                        exchange.first_token_at = clock.now()
                        break
            yield from events
        finally:
            close_items(events)
        if clock is not None:
            exchange.last_token_at = clock.now()
        exchange.completed = True
    finally:
        exchange.release_capacity()
        if live is not None:
            live.discard(exchange)
