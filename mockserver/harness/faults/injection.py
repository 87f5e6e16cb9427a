"""Fault injection: which fault a request gets, and the reply that carries it.

Precedence, first hit wins (DESIGN.md "Faults"):

1. the ``x-mock-fault`` request header (``none`` turns every fault off for that request);
2. the fixture's ``faults.rules``, matched on model, tier, key, path prefix and a
   regex over the request's text, in order;
3. the fixture's ``faults.probability``, drawing from ``faults.choices``.

Count-limited faults (``once``, ``times=N``, a rule's ``count``) are counted per
``x-mock-test-id``, so "503 once, then success" holds for each test on a shared
server; with a shared ``--state``, the count is one across every worker and replica.
The random draw comes from a ``random.Random`` seeded with the server's
seed and the test id: a test's faults are the same on every run, whatever ran before
(per process: several workers each draw their own sequence).

:func:`fault_for` is called by :func:`mockserver.api.serving.respond` for every
inference request; :func:`respond_with` builds the faulted reply. What each fault
makes a client do is in the manual's fault table (docs/faults.md).
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import anyio
from fastapi import Request
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.responses import Response

from mockserver import errors
from mockserver.config import patterns, suggestions
from mockserver.config.faults import FAULT_HEADER, FaultMatch, FaultSpec
from mockserver.config.fixture import describe_validation_error
from mockserver.engine.dialects import Dialect
from mockserver.engine.pacing import Pacer, Schedule
from mockserver.engine.streaming import DROP_GRACE_S, Item
from mockserver.errors.variants import ErrorContext, status_error
from mockserver.harness.faults.midstream import FaultPacer, with_fault
from mockserver.harness.journal import TEST_ID_HEADER
from mockserver.service.accounts import request_key
from mockserver.service.exchange import Exchange
from mockserver.service.inflight import CLIENT_CLOSED_STATUS, client_left
from mockserver.state.counters import Counters, MemoryCounters

MAX_SCOPES = 10_000  # random sources kept, one per test id


@dataclass(frozen=True)
class Chosen:
    spec: FaultSpec
    source: Literal["header", "rule", "random"]


@dataclass(frozen=True)
class FaultedStream:
    """A stream with its fault in it: the events to play, and how to drop the connection under them.
    The HTTP layer plays them as any other stream (:class:`mockserver.api.sse.EventStreamResponse`)."""

    events: Iterator[Item]
    on_drop: Callable[[], None]


class FaultState:
    """Counters for count-limited faults and random sources, per test id. ``clear()`` resets.

    The counters are a :class:`~mockserver.state.counters.Counters`: in this process by default, or
    in Redis, so that a fault limited to ``once`` fires once across every worker and replica. The
    random sources are always this process's own: with several workers, each draws its own sequence.
    """

    def __init__(self, seed: int, counters: Counters | None = None) -> None:
        self.seed = seed
        self.counters: Counters = counters if counters is not None else MemoryCounters()
        self._rngs: dict[str | None, random.Random] = {}

    async def take(self, scope: str | None, ident: str, times: int | None) -> bool:
        """Whether a fault limited to ``times`` firings may fire once more in ``scope`` (and count it)."""
        if times is None:
            return True  # no counter, no round trip
        return await self.counters.take(scope, ident, times)

    def rng(self, scope: str | None) -> random.Random:
        rng = self._rngs.get(scope)
        if rng is None:
            if len(self._rngs) >= MAX_SCOPES:
                self._rngs.pop(next(iter(self._rngs)))
            rng = self._rngs[scope] = random.Random(f"{self.seed}:{scope or ''}")
        return rng

    def reseed(self, seed: int) -> None:
        """A new seed: the random sources start again from it; the counters stay."""
        self.seed = seed
        self._rngs.clear()

    async def clear(self, scope: str | None = None) -> None:
        if scope is None:
            self._rngs.clear()
        else:
            self._rngs.pop(scope, None)
        await self.counters.clear(scope)


def parse_header(raw: str) -> FaultSpec:
    """The ``x-mock-fault`` header as a :class:`FaultSpec`, or an OpenAI-shaped 400 naming the problem."""
    try:
        return FaultSpec.model_validate(raw)
    except ValidationError as exc:
        problem = describe_validation_error(exc, FaultSpec).removeprefix("(top level): ")
        raise errors.InvalidRequestError(
            f"Invalid value for header '{FAULT_HEADER}': '{raw}'. {suggestions.sentence(problem)}",
            param=FAULT_HEADER,
            code="invalid_value",
        ) from None


def may_fault(state: Any, exchange: Exchange) -> bool:
    """Whether :func:`fault_for` could choose a fault for this request: it asks for one, or the fixture has
    fault rules or a probability. Most requests draw none, and are served without its coroutine."""
    config = state.fixture.faults
    return FAULT_HEADER in exchange.headers or bool(config.rules) or config.probability > 0


async def fault_for(state: Any, request: Request, exchange: Exchange) -> Chosen | None:
    """The fault for this request, if any. ``state`` is the :class:`~mockserver.server_state.ServerState`."""
    headers = exchange.headers  # decoded once per request, unlike request.headers
    scope = headers.get(TEST_ID_HEADER)
    raw = headers.get(FAULT_HEADER)
    if raw is not None:
        spec = parse_header(raw)
        if spec.is_none or not await state.fault_state.take(scope, "header:" + raw, spec.times):
            return None
        return Chosen(spec, "header")
    config = state.fixture.faults
    if config.rules:
        key = request_key(headers)
        for index, rule in enumerate(config.rules):
            if matches(rule.match, exchange, key) and await state.fault_state.take(scope, f"rule:{index}", rule.times):
                return Chosen(rule.fault, "rule")
    if config.probability > 0:
        rng = state.fault_state.rng(scope)
        if rng.random() < config.probability:
            return Chosen(rng.choice(config.choices), "random")
    return None


def matches(match: FaultMatch, exchange: Exchange, key: str | None) -> bool:
    if match.model is not None and match.model not in (exchange.model, _requested_model(exchange)):
        return False
    if match.tier is not None and match.tier != exchange.tier:
        return False
    if match.key is not None and match.key != key:
        return False
    if match.path is not None and not exchange.path.startswith(match.path):
        return False
    return match.message is None or patterns.search(match.message, request_text(exchange.body))


def _requested_model(exchange: Exchange) -> str | None:
    body = exchange.body
    return body.get("model") if isinstance(body, dict) else None


def request_text(body: Any) -> str:
    """The words of a Chat or Responses request (messages, input, instructions), for ``match.message``."""
    if not isinstance(body, dict):
        return ""
    parts: list[str] = []
    _collect(body.get("instructions"), parts)
    _collect(body.get("system"), parts)  # Anthropic's system prompt
    _collect(body.get("messages"), parts)
    _collect(body.get("input"), parts)
    return "\n".join(parts)


def _collect(value: Any, parts: list[str]) -> None:
    if isinstance(value, str):
        parts.append(value)
    elif isinstance(value, list):
        for item in value:
            _collect(item, parts)
    elif isinstance(value, dict):
        for name in ("content", "text", "output"):
            _collect(value.get(name), parts)


# -- The faulted reply ------------------------------------------------------------------------


async def respond_with(
    chosen: Chosen,
    request: Request,
    *,
    state: Any,
    schedule: Schedule,
    stream: bool,
    dialect: Dialect,
    events: Callable[[Pacer], Iterator[Item]],
    body: Callable[[], dict[str, Any] | Response],
    hold: Callable[[Awaitable[None]], Awaitable[Response | None]],
) -> Response | FaultedStream:
    """Serve one request with its fault. Stream-only faults leave a non-streaming reply alone,
    except ``drop_after`` (the connection closes with no reply) and stalls (the reply waits).
    A stream comes back as its faulted events (:class:`FaultedStream`), framed by ``dialect``.

    A non-streaming reply waits through ``hold``, which returns the reply to send instead when
    the wait is cut short (the client left, a reset, the time limit)."""
    spec = chosen.spec
    exchange: Exchange = request.scope["state"]["exchange"]
    exchange.fault = spec.describe()
    exchange.fault_source = chosen.source
    clock = state.clock
    pause = _pauser(request)
    shift = 0.0
    if spec.ttft_ms:
        before = clock.now()
        if not stream:
            if (cut := await hold(anyio.sleep(spec.ttft_ms / 1000))) is not None:
                return cut
        elif not await pause(spec.ttft_ms / 1000):
            return _client_gone(exchange)
        shift = clock.now() - before
    if spec.status is not None:
        exchange.usage = None
        raise status_error(
            spec.status,
            _error_context(exchange, request),
            code=spec.code,
            retry_after=spec.retry_after,
            retry=spec.retry,
            time_scale=state.settings.time_scale,
        )
    pacer = FaultPacer(clock, schedule)
    pacer.shift(shift)
    if stream:
        return FaultedStream(with_fault(events(pacer), spec, dialect=dialect, pacer=pacer), _dropper(request))
    if spec.drop_after is not None:
        await _aborter(request)()
        return _client_gone(exchange)
    if spec.stalls:
        stalled = _forever() if spec.stall else anyio.sleep((spec.stall_ms or 0) / 1000)
        if (cut := await hold(stalled)) is not None:
            return cut
    if (cut := await hold(pacer.wait_for_end())) is not None:
        return cut
    reply = body()  # the document, or the reply already made of it (a large one, encoded once)
    return reply if isinstance(reply, Response) else JSONResponse(reply)


async def _forever() -> None:
    """A stall with no end: only the client leaving (or a reset, or the time limit) ends it."""
    await anyio.Event().wait()


def _error_context(exchange: Exchange, request: Request) -> ErrorContext:
    account = exchange.account
    return ErrorContext(
        model=exchange.model or "gpt-5.6-sol",
        key=request_key(request.headers),
        organization=account.organization if account else "org-mock",
        project=account.project if account else "proj_mock",
        tier=exchange.tier or "default",
    )


def _client_gone(exchange: Exchange) -> Response:
    exchange.disconnected = True
    return Response(status_code=CLIENT_CLOSED_STATUS)


def _pauser(request: Request) -> Callable[[float | None], Any]:
    """``pause(seconds)``: wait, or until the client disconnects (False). ``None`` waits for the disconnect."""

    exchange: Exchange = request.scope["state"]["exchange"]

    async def pause(seconds: float | None) -> bool:
        with anyio.move_on_after(seconds):
            await client_left(request.receive)
            exchange.disconnected = True
            return False
        return True

    return pause


def _dropper(request: Request) -> Callable[[], None]:
    """Close the connection under a stream (the scheduler calls this at the fault's point)."""
    close = request.scope["state"].get("close_connection")
    exchange: Exchange = request.scope["state"]["exchange"]

    def drop() -> None:
        exchange.disconnected = True
        if close is None:
            raise ConnectionAbortedError("mockserver fault: connection dropped")
        close()

    return drop


def _aborter(request: Request) -> Callable[[], Any]:
    """Close the connection under the reply, so the client sees a transport error rather than an end."""
    close = request.scope["state"].get("close_connection")
    exchange: Exchange = request.scope["state"]["exchange"]

    async def abort() -> None:
        exchange.disconnected = True
        if close is None:
            raise ConnectionAbortedError("mockserver fault: connection dropped")
        close()
        with contextlib.suppress(Exception), anyio.move_on_after(DROP_GRACE_S):
            await client_left(request.receive)

    return abort
