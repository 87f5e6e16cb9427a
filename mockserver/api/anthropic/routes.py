"""``POST /v1/messages`` and ``POST /v1/messages/count_tokens``.

The request models are built with the routes; the family's pipeline (planning, the Message's turns and
events, server tools) loads with the first request that needs it, not at start-up, and is kept from then on
(an ``import`` statement run on every request costs about a microsecond).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from mockserver.api.anthropic import auth
from mockserver.api.anthropic.errors import BODY_WORDING
from mockserver.api.anthropic.family import AnthropicRoute
from mockserver.api.anthropic.schemas import CountTokensRequest, MessagesRequest
from mockserver.api.handler_inputs import body_schema, parse_body, server_state
from mockserver.api.middleware import request_headers
from mockserver.api.pipeline_entry import PipelineEntry
from mockserver.service import access

if TYPE_CHECKING:
    from mockserver.api.family import Family

router = APIRouter(prefix="/v1", tags=["anthropic"], route_class=AnthropicRoute)


def _family() -> Family[Any]:
    """The Messages family, imported with the first request."""
    from mockserver.api.anthropic.messages_family import MESSAGES

    return MESSAGES


_PIPELINE = PipelineEntry(_family)


@router.post("/messages", response_model=None, openapi_extra=body_schema(MessagesRequest))
async def create_message(request: Request) -> Response:
    """Create a Message (Anthropic's API), paced at the model's speed: ``speed: "fast"`` for fast mode."""
    serve, family = _PIPELINE.loaded()
    return await serve(request, family)


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
