"""``POST /v1/chat/completions``.

The request model is built with the route (the OpenAPI document and the body's validation need it); the
family's pipeline (planning, replies, streams) loads with the first request, not at start-up.
"""

from fastapi import APIRouter, Request
from starlette.responses import Response

from mockserver.api.handler_inputs import body_schema
from mockserver.api.openai.schemas import ChatCompletionRequest

router = APIRouter(prefix="/v1", tags=["chat"])


@router.post("/chat/completions", response_model=None, openapi_extra=body_schema(ChatCompletionRequest))
async def create_chat_completion(request: Request) -> Response:
    """Create a chat completion, paced at the resolved service tier's speed."""
    from mockserver.api.openai.chat.family import CHAT_COMPLETIONS
    from mockserver.api.pipeline import serve

    return await serve(request, CHAT_COMPLETIONS)
