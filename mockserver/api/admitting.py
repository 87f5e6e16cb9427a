"""Admitting one inference request and planning its reply, in the order that keeps refusals free.

The model and tier are resolved first (:func:`resolved`), the prompt is measured against the model's
window and looked up in the prompt cache, and the reply is planned, which is where the request's
content is validated (tools, formats, earlier responses). Only a request that passes all of these
takes shared resources (:func:`resources_taken`): quota, an Ultrafast slot, the rate windows. A capacity downgrade
changes the tier, so the reply is planned again for the tier served; a request that waited in the
capacity queue keeps its plan, moved later by the wait (:func:`settled`).

Every step takes plain data: the server's state, the request's exchange, its caller, and what the
request asked (:class:`mockserver.api.family.Asked`).
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import replace
from functools import partial
from typing import Any, Protocol, Self, TypeVar

from starlette.requests import ClientDisconnect
from starlette.types import Receive

from mockserver import errors
from mockserver.api.asgi import large_bodies
from mockserver.api.family import Asked
from mockserver.config.fixture import Account
from mockserver.engine.dialects import Dialect
from mockserver.server_state import ServerState
from mockserver.service import access, inflight, prefill, prompt_cache, tiers
from mockserver.service.access import Admission
from mockserver.service.capacity import queue as capacity_queue
from mockserver.service.exchange import Exchange


class Shiftable(Protocol):
    """A reply's plan, which can be moved later in time whole (:meth:`mockserver.engine.pacing.Schedule.shifted`)."""

    def shifted(self, seconds: float) -> Self: ...


Plan = TypeVar("Plan", bound=Shiftable)


async def admit(asked: Asked[Plan], dialect: Dialect, receive: Receive) -> tuple[Admission, Plan]:
    """Admit the request ``asked`` and plan its reply. ``dialect`` is the API family the route serves;
    the exchange carries it to :func:`mockserver.api.serving.respond`. ``receive`` tells when the client
    leaves while the request waits in the capacity queue."""
    state, exchange, sequences = asked.state, asked.exchange, asked.state.script_state
    resolved = resolve(state, exchange, asked.account, asked, dialect)
    # The prompt is counted once, here: in pieces that let the loop run, and no further than the window.
    exchange.dialect = dialect
    counted = asked.measured_at_once(resolved.model)
    if counted is None:
        counted = await asked.measure(resolved.model, dialect.name)
    prompt_tokens = exchange.prompt_tokens = counted.tokens
    cache = prompt_cache.MISSED
    if caches(state, exchange, asked, resolved, prompt_tokens):
        cache = await cache_lookup(state, asked, resolved)
        resolved = replace(resolved, cache=cache.use)
    resolved = with_prefill(exchange, resolved, prompt_tokens)
    record_admission(exchange, resolved, asked.raw, asked.stream)
    if asked.reads_ahead and (reading := asked.read_ahead()) is not None:
        await reading
    plan, rules = partial(asked.plan, resolved), state.fixture.scripts
    planned = sequences.planned_on_loop(rules, plan)  # most plans: at once, nothing to wait for
    if planned is None:  # a sequence's step (given to one request, in every process), or a backtracking check
        planned = await sequences.planned(rules, exchange, plan, tried_on_loop=True)
    large_bodies.let_collector_go(exchange)  # planned: the collector's passes a large body held off come back
    try:
        admission = await resources_taken(state, exchange, resolved, prompt_tokens, receive)
    except capacity_queue.ClientLeft:
        raise ClientDisconnect() from None  # journalled as 499 by the middleware
    if cache.writes:  # admitted: its prompt is read, so cached (most requests have nothing to write)
        await cache.write(state.store, state.clock.now())
    admission = settled(asked, resolved, admission, prompt_tokens)
    if admission.tier is not resolved.tier:  # another tier's pace, prefill and reply: planned again
        planned = await sequences.planned(rules, exchange, partial(asked.plan, admission))
    elif exchange.queued_ms:  # the same reply, later: its schedule moves, nothing is planned twice
        planned = planned.shifted(exchange.queued_ms / 1000)
    return admission, planned


def resolve(state: ServerState, exchange: Exchange, account: Account, asked: Asked[Any], dialect: Dialect) -> Admission:
    """The model and tier the request is served on (:func:`mockserver.service.access.resolve`); a refused
    tier is journalled as asked."""
    try:
        return access.resolve(
            state.fixture,
            account,
            exchange.headers,
            asked.model,
            asked.service_tier,
            received_at=exchange.started_at,
            api=dialect.api,
        )
    except errors.MockAPIError as exc:
        if exc.param == "service_tier":  # the journal shows the tier that was refused
            exchange.requested_tier, exchange.tier = asked.service_tier, tiers.asked_tier(asked.service_tier)
        raise


def caches(state: ServerState, exchange: Exchange, asked: Asked[Any], resolved: Admission, prompt_tokens: int) -> bool:
    """Whether the prompt cache is looked up: the family cuts its prompts into parts, the client did
    not turn caching off, and the prompt is long enough to be cached."""
    return (
        asked.caches_prompt
        and prompt_cache.wanted(exchange.headers)
        and prompt_cache.may_cache(
            state.fixture.prompt_caching, prompt_tokens, asked.raw, resolved.model.cache_min_tokens
        )
    )


def cache_lookup(state: ServerState, asked: Asked[Any], resolved: Admission) -> Awaitable[prompt_cache.Lookup]:
    """The prompt cache's part of the prompt (:mod:`mockserver.service.prompt_cache`): its cached tokens
    shorten the prefill and ride on the admission to the plan's usage; its prefixes are written once the
    request is admitted."""
    return prompt_cache.lookup(
        state.store,
        state.clock.now(),
        state.fixture.prompt_caching,
        account=asked.account,
        model=resolved.model,
        body=asked.raw,
        parts=asked.cache_parts,
        time_scale=state.settings.time_scale,
    )


def resources_taken(
    state: ServerState, exchange: Exchange, resolved: Admission, prompt_tokens: int, receive: Receive
) -> Awaitable[Admission]:
    """The shared resources the request takes (quota, an Ultrafast slot, the rate windows), waiting in
    the capacity queue where the fixture has one (:class:`~mockserver.service.capacity.queue.ClientLeft`
    when the client leaves it)."""
    settings = state.settings
    queue_ms = state.fixture.capacity.queue_ms
    queue = None
    if queue_ms:  # most fixtures have no queue: nothing to work out
        queue_s = capacity_queue.wait_seconds(queue_ms, settings.time_scale, settings.max_reply_seconds)
        if queue_s > 0:
            queue = capacity_queue.Queue(
                queue_s, state.clock, partial(inflight.client_left, receive), lambda: state.fixture
            )
    return access.take_resources(
        state.fixture,
        resolved,
        request=access.Resources(exchange, state.store, state.clock, settings.time_scale),
        queue=queue,
        prompt_tokens=prompt_cache.rate_limited_tokens(resolved.model, prompt_tokens, resolved.cache),
    )


def settled(asked: Asked[Any], resolved: Admission, admission: Admission, prompt_tokens: int) -> Admission:
    """The admission as served: with the prefill of a downgraded tier (which is then planned again), and
    received later by a wait for a capacity slot, which is part of the TTFT: the reply's schedule starts
    when the slot was had."""
    exchange = asked.exchange
    if admission.tier is not resolved.tier:  # take_resources returns the tier as it was, or a new one
        admission = with_prefill(exchange, admission, prompt_tokens)
        record_admission(exchange, admission, asked.raw, asked.stream)
    queued_ms = exchange.queued_ms
    if queued_ms and admission.received_at is not None:
        admission = replace(admission, received_at=admission.received_at + queued_ms / 1000)
    return admission


def with_prefill(exchange: Exchange, admission: Admission, prompt_tokens: int) -> Admission:
    """The admission with the prompt's prefill in its TTFT (:mod:`mockserver.service.prefill`), journalled."""
    admission, seconds = prefill.with_prefill(admission, prompt_tokens, admission.cache.cached_tokens)
    exchange.prefill_ms = round(seconds * 1000, 3) if seconds else 0.0  # most have none: no round()
    return admission


def record_admission(exchange: Exchange, admission: Admission, body: Any, stream: bool) -> None:
    """Journal what was admitted: the caller, the model and tier served, the body and whether it streams."""
    exchange.account = admission.account
    exchange.model = admission.model.id
    exchange.requested_tier = admission.tier.requested
    exchange.tier = admission.tier.tier
    exchange.downgraded = admission.tier.downgraded
    exchange.body = body
    exchange.stream = stream
