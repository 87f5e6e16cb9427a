"""``POST /v1/messages`` and ``POST /v1/messages/count_tokens``.

The request models are built with the routes; the family's pipeline (planning, the Message's turns and
events, server tools) loads with the first request that needs it, not at start-up.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from mockserver.api.anthropic import auth
from mockserver.api.anthropic.errors import BODY_WORDING
from mockserver.api.anthropic.family import AnthropicRoute
from mockserver.api.anthropic.schemas import CountTokensRequest, MessagesRequest
from mockserver.api.handler_inputs import body_schema, parse_body, server_state
from mockserver.api.middleware import request_headers
from mockserver.service import access

router = APIRouter(prefix="/v1", tags=["anthropic"], route_class=AnthropicRoute)


@router.post("/messages", response_model=None, openapi_extra=body_schema(MessagesRequest))
async def create_message(request: Request) -> Response:
    """Create a Message (Anthropic's API), paced at the model's speed: ``speed: "fast"`` for fast mode."""
    from mockserver.api.anthropic.messages_family import MESSAGES
    from mockserver.api.pipeline import serve

    return await serve(request, MESSAGES)


@router.post("/messages/count_tokens", openapi_extra=body_schema(CountTokensRequest))
async def count_tokens(request: Request) -> dict[str, Any]:
    """The input tokens a Message with this body would report in its usage."""
    from mockserver.api import replaying

    state = server_state(request)
    account = auth.authenticate(state.fixture, request_headers(request.scope))
    body, raw = await parse_body(request, CountTokensRequest, BODY_WORDING)
    recorded = await replaying.counted_tokens(request, account, raw, model=body.model)
    if recorded is not None:
        return recorded
    access.find_model(state.fixture, account, body.model, api="anthropic")
    from mockserver.api.anthropic import messages

    return {"input_tokens": await messages.counted_input_tokens(body)}
