"""``POST /v1/moderations``."""

from fastapi import APIRouter, Request
from starlette.responses import Response

from mockserver.api.handler_inputs import body_schema, parse_body, server_state
from mockserver.api.middleware import exchange_of, request_headers
from mockserver.api.openai.moderations.schemas import ModerationRequest
from mockserver.service import access

# Up to this long a body is classified on the event loop: a few hundred words, each rule a linear-time search.
THREAD_FROM_BYTES = 4_096

router = APIRouter(prefix="/v1", tags=["moderations"])


@router.post("/moderations", response_model=None, openapi_extra=body_schema(ModerationRequest))
async def create_moderation(request: Request) -> Response:
    """Classify text and images: flagged only where a rule of the fixture's ``moderation`` says so."""
    from mockserver.api import replaying, whole_replies
    from mockserver.api.openai.moderations import plan as moderation_plan  # with the first request, not at start-up

    state = server_state(request)
    exchange = exchange_of(request.scope)
    account = access.authenticate(state.fixture, request_headers(request.scope))
    body, raw = await parse_body(request, ModerationRequest)
    replayed = await replaying.answer_whole(request, account, raw, model=body.model, kind="moderation")
    if replayed is not None:
        return replayed
    moderation_plan.check_limits(body)
    rules = state.fixture.moderation.rules
    admission, plan = await whole_replies.admit(
        request,
        account,
        model=body.model,
        kind="moderation",
        raw_body=raw,
        plan=lambda admitted: moderation_plan.plan_moderation(rules, body),
        input_tokens=lambda planned: planned.input_tokens,
        in_thread=len(exchange.request_body) > THREAD_FROM_BYTES,
    )
    encoded = whole_replies.encode(moderation_plan.document(plan, f"modr-{state.ids.hex(32)}"))
    return await whole_replies.respond(request, admission, input_tokens=plan.input_tokens, body=encoded)
