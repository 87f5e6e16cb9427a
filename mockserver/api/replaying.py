"""A request answered from a recording: the hook each inference route calls before it generates.

With cassettes in force (``--replay``, the fixture's ``replay:``), a request that matches a
recording is admitted like any other (accounts, access, capacity, rate limits) and served the
recorded reply through :func:`mockserver.api.serving.respond`, so the ledger, the journal, faults and
the metrics see it as they see a generated one. A request that matches none gets the fixture's
``replay_miss``: the ``no_recording`` 400, ``None`` (the route generates a reply), or, with
``record``, the request forwarded to ``--upstream``, recorded into the first cassette, and answered.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from starlette.responses import Response

from mockserver.api import serving
from mockserver.api.handler_inputs import server_state
from mockserver.api.middleware import exchange_of
from mockserver.config.fixture import Account
from mockserver.engine.dialects import CHAT, Dialect
from mockserver.harness.journal import TEST_ID_HEADER
from mockserver.harness.replay import library
from mockserver.recording.proxy import forward
from mockserver.recording.recorders import Recorders
from mockserver.replies.recorded import plan_replay
from mockserver.replies.recorded_shapes import BodyStream
from mockserver.server_state import ServerState

RECORDERS = "recorders"  # the server's :class:`Recorders`, in its resources: closed when it stops


async def answer(
    request: Request,
    account: Account,
    raw: Any,
    *,
    model: str,
    service_tier: str | None,
    stream: bool,
    dialect: Dialect = CHAT,
    family: BodyStream | None = None,
) -> Response | None:
    """The recorded reply, or the miss's answer; ``None`` when the route should generate one. ``family``
    is the API family's stream of a recorded body that was not streamed (Responses, Messages)."""
    state = server_state(request)
    fixture = state.fixture
    if not fixture.replay:
        return None
    found = library.library_for(fixture)
    exchange = exchange_of(request.scope)
    key, entries = found.matches(request.method, exchange.path, raw)
    if not entries:
        if fixture.replay_miss == "generate":
            return None
        if fixture.replay_miss == "record" and state.settings.upstream:
            return await _record(request, state, state.settings.upstream, fixture.replay[0], list(fixture.redact))
        raise found.miss(request.method, exchange.path, raw)
    entry = await library.take(state.replay_order, exchange.headers.get(TEST_ID_HEADER), key, entries)
    options = raw.get("stream_options") if isinstance(raw, dict) else None
    include_usage = bool(options.get("include_usage")) if isinstance(options, dict) else False
    _, plan = await serving.admit_and_plan(
        request,
        account,
        model=model,
        service_tier=service_tier,
        raw_body=raw,
        stream=stream,
        plan=lambda admitted: plan_replay(
            entry.record,
            admitted,
            start=admitted.start_time(state.clock),
            stream=stream,
            include_usage=include_usage,
            timing=fixture.replay_timing,
            time_scale=state.settings.time_scale,
            chat_ultrafast_tier=fixture.policies.chat_ultrafast_service_tier,
            family=family,
        ),
        dialect=dialect,
    )
    return await serving.respond(
        request, usage=plan.usage, schedule=plan.schedule, stream=stream, events=plan.events, body=plan.body
    )


async def _record(request: Request, state: ServerState, upstream: str, cassette: str, redact: list[str]) -> Response:
    """Forward a request no recording matches, and record it; the library reloads the cassette after."""
    body = await request.body()
    recorder = await recorders(state).get(upstream, cassette, redact)
    return await forward(recorder, request, body)  # counts the exchange on the recorder before it awaits


def recorders(state: ServerState) -> Recorders:
    """The server's recorders of replay misses, made on the first miss recorded."""
    kept = state.resources.get(RECORDERS)
    if isinstance(kept, Recorders):
        return kept
    made = Recorders()
    state.resources[RECORDERS] = made
    return made
