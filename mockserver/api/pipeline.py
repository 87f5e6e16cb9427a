"""One inference request, from the route to its reply: the same steps for every API family.

authenticate → parse → replay → read → admit (entitlement, capacity and queue, rate limits, context
window, prefill) → plan → keep → fault or respond.

A route handler is one line: ``return await serve(request, FAMILY)``, where ``FAMILY`` is the API
family's :class:`mockserver.api.family.Family` (Chat Completions, the Responses API, Anthropic's
Messages). What the steps need is taken from ``request`` here, once; every step below reads plain
data: the server's state, the request's exchange, its caller, and what the request asked.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from starlette.responses import Response

from mockserver.api import admitting, replaying, serving
from mockserver.api.family import Family
from mockserver.api.handler_inputs import parse_body, server_state
from mockserver.api.middleware import exchange_of


async def serve(request: Request, family: Family[Any]) -> Response:
    """Serve one inference request of ``family``."""
    state = server_state(request)
    exchange = exchange_of(request.scope)
    account = family.authenticate(state.fixture, exchange.headers)
    body, raw = await parse_body(request, family.request_model, family.wording)
    family.refuse_early(state.fixture, body)
    asked = family.asked(state, exchange, account, body, raw)
    if state.fixture.replay:  # cassettes in force: a recording may answer it
        replayed = await replaying.answer(request, asked, family.dialect, family.replay_stream)
        if replayed is not None:
            return replayed
    if asked.reads_first:
        await asked.read()
    admission, plan = await admitting.admit(asked, family.dialect, request.receive)
    if family.keeps_replies:
        await family.keep(asked, plan)
    return await serving.respond(request, asked.reply(admission, plan), stream=asked.stream)
