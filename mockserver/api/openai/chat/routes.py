"""``POST /v1/chat/completions``.

The request model is built with the route (the OpenAPI document and the body's validation need it); the
family's pipeline (planning, replies, streams) loads with the first request, not at start-up, and is kept
from then on (an ``import`` statement run on every request costs about a microsecond).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from mockserver.api.handler_inputs import body_schema
from mockserver.api.openai.schemas import ChatCompletionRequest
from mockserver.api.pipeline_entry import PipelineEntry

if TYPE_CHECKING:
    from mockserver.api.family import Family

router = APIRouter(prefix="/v1", tags=["chat"])


def _family() -> Family[Any]:
    """The Chat Completions family, imported with the first request."""
    from mockserver.api.openai.chat.family import CHAT_COMPLETIONS

    return CHAT_COMPLETIONS


_PIPELINE = PipelineEntry(_family)


@router.post("/chat/completions", response_model=None, openapi_extra=body_schema(ChatCompletionRequest))
async def create_chat_completion(request: Request) -> Response:
    """Create a chat completion, paced at the resolved service tier's speed."""
    serve, family = _PIPELINE.loaded()
    return await serve(request, family)
