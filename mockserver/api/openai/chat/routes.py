"""``POST /v1/chat/completions``."""

from fastapi import APIRouter, Request
from starlette.responses import Response

from mockserver.api.handler_inputs import body_schema
from mockserver.api.openai.chat.family import CHAT_COMPLETIONS
from mockserver.api.openai.schemas import ChatCompletionRequest
from mockserver.api.pipeline import serve

router = APIRouter(prefix="/v1", tags=["chat"])


@router.post("/chat/completions", response_model=None, openapi_extra=body_schema(ChatCompletionRequest))
async def create_chat_completion(request: Request) -> Response:
    """Create a chat completion, paced at the resolved service tier's speed."""
    return await serve(request, CHAT_COMPLETIONS)
