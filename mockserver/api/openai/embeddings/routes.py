"""``POST /v1/embeddings``."""

from fastapi import APIRouter, Request
from starlette.responses import Response

from mockserver.api.handler_inputs import body_schema, parse_body, server_state
from mockserver.api.middleware import exchange_of, request_headers
from mockserver.api.openai.embeddings.schemas import EmbeddingRequest
from mockserver.service import access

router = APIRouter(prefix="/v1", tags=["embeddings"])


@router.post("/embeddings", response_model=None, openapi_extra=body_schema(EmbeddingRequest))
async def create_embedding(request: Request) -> Response:
    """Embed text: one deterministic unit-length vector per input, closer for texts that share words."""
    from mockserver.api import replaying, whole_replies
    from mockserver.api.openai.embeddings import plan as embedding_plan  # with the first request, not at start-up
    from mockserver.api.openai.embeddings import room

    state = server_state(request)
    exchange = exchange_of(request.scope)
    account = access.authenticate(state.fixture, request_headers(request.scope))
    body, raw = await parse_body(request, EmbeddingRequest)
    replayed = await replaying.answer_whole(request, account, raw, model=body.model, kind="embedding")
    if replayed is not None:
        return replayed
    admission, plan = await whole_replies.admit(
        request,
        account,
        model=body.model,
        kind="embedding",
        raw_body=raw,
        plan=lambda admitted: embedding_plan.plan_embeddings(state, admitted, body, exchange.path),
        input_tokens=lambda planned: planned.input_tokens,
        # A large request waits until it fits the process's memory budget first (or its client leaves).
        before_plan=lambda admitted: room.make_room(request, exchange, admitted, body),
        # Off the event loop: the first request loads cl100k_base (about a second), and a large one
        # takes seconds to count and embed.
        in_thread=True,
    )
    if plan.script is not None:
        exchange.script = plan.script
    encoded = await whole_replies.encode_off_loop(
        lambda: embedding_plan.document(plan, body.encoding_format), plan.values
    )
    return await whole_replies.respond(request, admission, input_tokens=plan.input_tokens, body=encoded)
