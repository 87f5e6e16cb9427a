"""Serving one admitted inference request: record the decisions, then pace the reply out.

Chat Completions and the Responses API share this path, so both get the same
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

from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import replace
from typing import Any, Protocol, Self, TypeVar

from fastapi import Request
from fastapi.responses import JSONResponse
from starlette.requests import ClientDisconnect
from starlette.responses import Response

from mockserver import errors
from mockserver.api.asgi import large_bodies
from mockserver.api.handler_inputs import server_state
from mockserver.api.middleware import exchange_of
from mockserver.api.sse import EventStreamResponse
from mockserver.config.fixture import Account, ModelSpec
from mockserver.engine.dialects import CHAT, Dialect
from mockserver.engine.pacing import Clock, Pacer, Schedule
from mockserver.engine.streaming import Item, close_items
from mockserver.harness.faults import injection
from mockserver.service import access, context_window, inflight, prefill, prompt_cache, tiers
from mockserver.service.access import Admission
from mockserver.service.capacity import queue as capacity_queue
from mockserver.service.exchange import Exchange, Usage


class Shiftable(Protocol):
    """A reply's plan, which can be moved later in time whole (:meth:`mockserver.engine.pacing.Schedule.shifted`)."""

    def shifted(self, seconds: float) -> Self: ...


Plan = TypeVar("Plan", bound=Shiftable)


async def admit_and_plan(
    request: Request,
    account: Account,
    *,
    model: str,
    service_tier: str | None,
    raw_body: Any,
    stream: bool,
    plan: Callable[[Admission], Plan],
    dialect: Dialect = CHAT,
    cache_parts: Callable[[], Iterable[prompt_cache.Part]] | None = None,
    measure: Callable[[ModelSpec], Awaitable[int]] | None = None,
    read_ahead: Callable[[], Awaitable[None]] | None = None,
) -> tuple[Admission, Plan]:
    """Admit an inference request and plan its reply, in the order that keeps refusals free.

    The model and tier are resolved first, then the reply is planned, which is where the
    request's content is validated (tools, formats, earlier responses). Only a request
    that passes both takes shared resources: quota, an Ultrafast slot, the rate windows.
    A capacity downgrade changes the tier, so the reply is planned again for the tier served; a
    request that waited in the capacity queue keeps its plan, moved later by the wait.

    ``dialect`` is the API family the route serves: the models it may ask for, how its prompt is
    counted, and how its stream is framed. The exchange carries it to :func:`respond`.

    ``cache_parts`` cuts the prompt into the parts the prompt cache matches
    (:mod:`mockserver.service.prompt_cache`); called only for a prompt long enough to be cached. The
    cached tokens shorten the prefill and ride on the admission to the plan's usage; the prefixes are
    written once the request is admitted.

    ``measure`` counts the prompt and holds it to the resolved model's window (raising the live 400),
    in place of :func:`mockserver.service.context_window.measure` of ``raw_body``: the Responses API's
    holds the whole conversation a ``previous_response_id`` continues
    (:mod:`mockserver.api.openai.responses.prompt_fit`).

    ``read_ahead`` is awaited once the prompt has passed the window, before the reply is planned: it
    reads what the plan needs of a long prompt with the event loop's turns (planning itself is one
    call), and only for a request that got this far.
    """
    state = server_state(request)
    exchange = exchange_of(request.scope)
    headers = exchange.headers  # the request's headers (:func:`mockserver.api.middleware.request_headers`)
    try:
        resolved = access.resolve(
            state.fixture,
            account,
            headers,
            model,
            service_tier,
            received_at=exchange.started_at,
            api=dialect.api,
        )
    except errors.MockAPIError as exc:
        if exc.param == "service_tier":  # the journal shows the tier that was refused
            exchange.requested_tier, exchange.tier = service_tier, tiers.asked_tier(service_tier)
        raise
    # The prompt is counted once, here: in pieces that let the loop run, and no further than the window.
    exchange.dialect = dialect
    if measure is not None:
        prompt_tokens = await measure(resolved.model)
    else:
        prompt_tokens = (await context_window.measure(resolved.model, raw_body, dialect.name)).tokens
    exchange.prompt_tokens = prompt_tokens
    cache = prompt_cache.MISSED
    caching = state.fixture.prompt_caching
    wanted = prompt_cache.wanted(headers)
    if (
        cache_parts is not None
        and wanted
        and prompt_cache.may_cache(caching, prompt_tokens, raw_body, resolved.model.cache_min_tokens)
    ):
        cache = await prompt_cache.lookup(
            state.store,
            state.clock.now(),
            caching,
            account=account,
            model=resolved.model,
            body=raw_body,
            parts=cache_parts,
            time_scale=state.settings.time_scale,
        )
        resolved = replace(resolved, cache=cache.use)
    resolved = _with_prefill(exchange, resolved, prompt_tokens)
    record_admission(request, resolved, raw_body, stream)
    if read_ahead is not None:
        await read_ahead()
    sequences = state.script_state  # a scripted sequence's step goes to one request, in every process
    planned = await sequences.planned(state.fixture.scripts, exchange, lambda: plan(resolved))
    large_bodies.let_collector_go(exchange)  # planned: the collector's passes a large body held off come back
    resources = access.Resources(exchange, state.store, state.clock, state.settings.time_scale)
    queue_s = capacity_queue.wait_seconds(
        state.fixture.capacity.queue_ms, state.settings.time_scale, state.settings.max_reply_seconds
    )
    queue = (
        capacity_queue.Queue(queue_s, state.clock, lambda: client_left(request), lambda: state.fixture)
        if queue_s > 0
        else None
    )
    try:
        admission = await access.take_resources(
            state.fixture,
            resolved,
            request=resources,
            queue=queue,
            prompt_tokens=prompt_cache.rate_limited_tokens(resolved.model, prompt_tokens, cache.use),
        )
    except capacity_queue.ClientLeft:
        raise ClientDisconnect() from None  # journalled as 499 by the middleware
    if cache.writes:  # admitted: its prompt is read, so cached (most requests have nothing to write)
        await cache.write(state.store, state.clock.now())
    downgraded = admission.tier is not resolved.tier  # take_resources returns the tier as it was, or a new one
    if downgraded:
        admission = _with_prefill(exchange, admission, prompt_tokens)
        record_admission(request, admission, raw_body, stream)
    queued_ms = exchange.queued_ms
    if queued_ms and admission.received_at is not None:
        # The wait for a slot is part of the TTFT: the reply's schedule starts when the slot was had.
        admission = replace(admission, received_at=admission.received_at + queued_ms / 1000)
    if downgraded:  # another tier's pace, prefill and reply: planned again
        planned = await sequences.planned(state.fixture.scripts, exchange, lambda: plan(admission))
    elif queued_ms:  # the same reply, later: its schedule moves, nothing is planned twice
        planned = planned.shifted(queued_ms / 1000)
    return admission, planned


def _with_prefill(exchange: Exchange, admission: Admission, prompt_tokens: int) -> Admission:
    """The admission with the prompt's prefill in its TTFT (:mod:`mockserver.service.prefill`), journalled."""
    admission, seconds = prefill.with_prefill(admission, prompt_tokens, admission.cache.cached_tokens)
    exchange.prefill_ms = round(seconds * 1000, 3) if seconds else 0.0  # most have none: no round()
    return admission


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
    events: Callable[[Pacer], Iterator[Item]],
    body: Callable[[], dict[str, Any]],
) -> Response:
    """Stream ``events`` on the schedule, framed by the exchange's dialect (:func:`admit_and_plan` set it), or
    hold the whole ``body`` until the schedule ends.

    A request that draws a fault (header, fixture rule or probability) is served by
    :func:`mockserver.harness.faults.injection.respond_with` instead, for every API that comes through here.
    """
    state = server_state(request)
    exchange = exchange_of(request.scope)
    exchange.usage = usage
    dialect = exchange.dialect
    fault = await injection.fault_for(state, request, exchange)
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
        source = _held_until_done(
            events(pacer), exchange, clock=state.clock, dialect=dialect, on_end=lambda: live.discard(exchange)
        )
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
    on_end: Callable[[], None] | None = None,
) -> Iterator[Item]:
    """Pass the stream through; mark it complete only if every event went out; always release the slot.

    With a ``clock`` and the stream's ``dialect``, it notes when the first token event and the end went
    out, for the metrics' TTFT and achieved-rate histograms (looking at events only until the first
    token: no cost after).

    The scheduler closes this iterator the moment the stream is over, however it ends (the client
    leaving, or the server stopping, which first sends a final error event: see
    :meth:`mockserver.engine.scheduler.StreamScheduler.end_all`), so the ``finally`` gives the
    Ultrafast slot back: the store call starts within that tick, and is done a round trip later;
    ``on_end`` runs there too.
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
        if on_end is not None:
            on_end()
