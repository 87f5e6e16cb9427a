"""``POST /v1/chat/completions``."""

from functools import partial

from fastapi import APIRouter, Request
from starlette.responses import Response

from mockserver.api import replaying, serving
from mockserver.api.handler_inputs import body_schema, parse_body, server_state
from mockserver.api.middleware import exchange_of, request_headers
from mockserver.api.openai.chat import cache_parts, completions
from mockserver.api.openai.schemas import ChatCompletionRequest
from mockserver.engine.dialects import CHAT
from mockserver.service import access

router = APIRouter(prefix="/v1", tags=["chat"])


@router.post("/chat/completions", response_model=None, openapi_extra=body_schema(ChatCompletionRequest))
async def create_chat_completion(request: Request) -> Response:
    """Create a chat completion, paced at the resolved service tier's speed."""
    state = server_state(request)
    account = access.authenticate(state.fixture, request_headers(request.scope))
    body, raw = await parse_body(request, ChatCompletionRequest)
    stream = bool(body.stream)
    replayed = await replaying.answer(
        request, account, raw, model=body.model, service_tier=body.service_tier, stream=stream, dialect=CHAT
    )
    if replayed is not None:
        return replayed
    exchange = exchange_of(request.scope)
    messages = completions.MessagesRead(body)
    admission, plan = await serving.admit_and_plan(
        request,
        account,
        model=body.model,
        service_tier=body.service_tier,
        raw_body=raw,
        stream=bool(body.stream),
        dialect=CHAT,
        read_ahead=messages.read,
        plan=lambda admitted: completions.plan_chat_completion(state, admitted, body, raw, exchange, messages.items),
        cache_parts=lambda: cache_parts.chat_parts(body, raw),
    )
    return await serving.respond(
        request,
        usage=plan.exchange_usage(),
        schedule=plan.schedule,
        stream=bool(body.stream),
        events=partial(completions.stream_chunks, plan, per_chunk=admission.profile.tokens_per_chunk),
        body=partial(completions.completion_body, plan),
    )
