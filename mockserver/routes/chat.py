"""``POST /v1/chat/completions``."""

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from mockserver import access, chat
from mockserver.pacing import Pacer
from mockserver.routes import body_schema, parse_body, server_state
from mockserver.schemas import ChatCompletionRequest
from mockserver.streaming import EventStreamResponse

router = APIRouter(prefix="/v1", tags=["chat"])


@router.post("/chat/completions", response_model=None, openapi_extra=body_schema(ChatCompletionRequest))
async def create_chat_completion(request: Request) -> Any:
    """Create a chat completion, paced at the resolved service tier's speed."""
    state = server_state(request)
    account = access.authenticate(state.fixture, request.headers)
    body, raw = await parse_body(request, ChatCompletionRequest)
    admission = access.admit(state.fixture, account, request.headers, body.model, body.service_tier)
    plan = chat.plan_chat_completion(state, admission, body, raw)
    pacer = Pacer(state.clock, plan.schedule)
    if body.stream:
        return EventStreamResponse(chat.stream_chunks(plan, pacer, admission.profile.tokens_per_chunk))
    await pacer.wait_for_end()
    return JSONResponse(chat.completion_body(plan))
