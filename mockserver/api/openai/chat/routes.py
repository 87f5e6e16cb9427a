"""``POST /v1/chat/completions``.

The request model is built with the route (the OpenAPI document and the body's validation need it); the
family's pipeline (planning, replies, streams) loads with the first request, not at start-up, and is kept
from then on (an ``import`` statement run on every request costs about a microsecond).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from mockserver.api.handler_inputs import body_schema
from mockserver.api.openai.schemas import ChatCompletionRequest

if TYPE_CHECKING:
    from mockserver.api.family import Family

router = APIRouter(prefix="/v1", tags=["chat"])

Serve = Callable[[Request, "Family[Any]"], Awaitable[Response]]
_pipeline: tuple[Serve, Family[Any]] | None = None  # the pipeline's entry and the family, once loaded


@router.post("/chat/completions", response_model=None, openapi_extra=body_schema(ChatCompletionRequest))
async def create_chat_completion(request: Request) -> Response:
    """Create a chat completion, paced at the resolved service tier's speed."""
    serve, family = _pipeline or _load_pipeline()
    return await serve(request, family)


def _load_pipeline() -> tuple[Serve, Family[Any]]:
    """Load the Chat Completions family and the request pipeline (with the first request), and keep them."""
    global _pipeline
    from mockserver.api.openai.chat.family import CHAT_COMPLETIONS
    from mockserver.api.pipeline import serve

    _pipeline = (serve, CHAT_COMPLETIONS)
    return _pipeline
