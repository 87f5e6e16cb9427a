"""``POST /v1/messages`` and ``POST /v1/messages/count_tokens``."""

from __future__ import annotations

from functools import partial
from typing import Any, TypeVar

from fastapi import APIRouter, Request
from pydantic import BaseModel
from starlette.responses import Response

from mockserver import errors
from mockserver.api import replaying, serving, validated_body
from mockserver.api.anthropic import auth, cache_parts, event_stream, messages, turns
from mockserver.api.anthropic import replayed as replayed_stream
from mockserver.api.anthropic.errors import invalid_request
from mockserver.api.anthropic.family import AnthropicRoute
from mockserver.api.anthropic.schemas import CountTokensRequest, MessagesRequest
from mockserver.api.asgi.large_bodies import LARGE_BODY_BYTES, keep_lists
from mockserver.api.handler_inputs import body_schema, large_body_read, server_state
from mockserver.api.middleware import exchange_of, request_headers
from mockserver.engine import jsonbody
from mockserver.engine.dialects import ANTHROPIC
from mockserver.service import access

router = APIRouter(prefix="/v1", tags=["anthropic"], route_class=AnthropicRoute)
Body = TypeVar("Body", bound=BaseModel)


@router.post("/messages", response_model=None, openapi_extra=body_schema(MessagesRequest))
async def create_message(request: Request) -> Response:
    """Create a Message (Anthropic's API), paced at the model's speed: ``speed: "fast"`` for fast mode."""
    state = server_state(request)
    account = auth.authenticate(state.fixture, request_headers(request.scope))
    body, raw = await parse(request, MessagesRequest)
    messages.check_speed(state.fixture, body)
    replayed = await replaying.answer(
        request,
        account,
        raw,
        model=body.model,
        service_tier=messages.tier_for(body),
        stream=bool(body.stream),
        dialect=ANTHROPIC,
        family=replayed_stream.stream_of_message,
    )
    if replayed is not None:
        return replayed
    reading = await turns.read_ahead(body.system, body.messages)  # with the loop's turns between messages
    admission, plan = await serving.admit_and_plan(
        request,
        account,
        model=body.model,
        service_tier=messages.tier_for(body),
        raw_body=raw,
        stream=bool(body.stream),
        plan=lambda admitted: messages.plan_message(state, admitted, body, raw, exchange_of(request.scope), reading),
        dialect=ANTHROPIC,
        cache_parts=lambda: cache_parts.message_parts(body, reading),
    )
    return await serving.respond(
        request,
        usage=plan.exchange_usage(),
        schedule=plan.schedule,
        stream=bool(body.stream),
        events=partial(event_stream.stream_events, plan, per_chunk=admission.profile.tokens_per_chunk),
        body=partial(messages.message_body, plan),
    )


@router.post("/messages/count_tokens", openapi_extra=body_schema(CountTokensRequest))
async def count_tokens(request: Request) -> dict[str, Any]:
    """The input tokens a Message with this body would report in its usage."""
    state = server_state(request)
    account = auth.authenticate(state.fixture, request_headers(request.scope))
    body, raw = await parse(request, CountTokensRequest)
    recorded = await replaying.counted_tokens(request, account, raw, model=body.model)
    if recorded is not None:
        return recorded
    access.find_model(state.fixture, account, body.model, api="anthropic")
    return {"input_tokens": await messages.counted_input_tokens(body)}


async def parse(request: Request, model: type[Body]) -> tuple[Body, dict[str, Any]]:
    """The JSON body, validated, or a 400 worded as Anthropic's API words it (``max_tokens: Field required``)."""
    raw = await request.body()
    if len(raw) > LARGE_BODY_BYTES:
        await large_body_read(request)
    try:
        data = await jsonbody.loads_in_turns(raw, server_state(request).settings.max_json_depth) if raw else None
    except errors.MockAPIError as exc:
        if exc.code == "json_too_deep":
            raise
        raise invalid_request(
            "There was an issue with the formatting or content of your request: not valid JSON."
        ) from None
    if not isinstance(data, dict):
        raise invalid_request("The request body must be a JSON object.")
    try:
        validated = await validated_body.validated(model, data)  # as parse_body does
        if len(raw) > LARGE_BODY_BYTES:
            keep_lists(exchange_of(request.scope), data, validated)
        return validated, data
    except validated_body.BodyInvalid as exc:
        first = exc.problems[0]
        where = ".".join(str(part) for part in first["loc"] if not _is_union_tag(part))
        raise invalid_request(f"{where}: {first['msg']}" if where else first["msg"]) from None


def _is_union_tag(part: Any) -> bool:
    return isinstance(part, str) and ("[" in part or part in {"str", "list", "dict"})
