"""``POST /v1/responses``, ``GET`` and ``DELETE /v1/responses/{response_id}``."""

from functools import partial

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.responses import Response

from mockserver import access, response_events, responses, serving
from mockserver.routes import body_schema, parse_body, server_state
from mockserver.schemas import ResponseCreateRequest

router = APIRouter(prefix="/v1", tags=["responses"])


@router.post("/responses", response_model=None, openapi_extra=body_schema(ResponseCreateRequest))
async def create_response(request: Request) -> Response:
    """Create a response, paced at the resolved service tier's speed, and store it unless ``store`` is false."""
    state = server_state(request)
    account = access.authenticate(state.fixture, request.headers)
    body, raw = await parse_body(request, ResponseCreateRequest)
    admission, plan = serving.admit(
        request,
        account,
        model=body.model,
        service_tier=body.service_tier,
        raw_body=raw,
        stream=bool(body.stream),
        plan=lambda admitted: responses.plan_response(state, admitted, body, raw),
    )
    responses.remember(state, plan)
    return await serving.respond(
        request,
        usage=plan.exchange_usage(),
        schedule=plan.schedule,
        stream=bool(body.stream),
        events=partial(response_events.stream_events, plan, per_chunk=admission.profile.tokens_per_chunk),
        body=partial(responses.response_object, plan),
    )


@router.get("/responses/{response_id}", response_model=None)
async def retrieve_response(request: Request, response_id: str) -> Response:
    """A stored response of the caller's project: in progress until its schedule ends."""
    state = server_state(request)
    account = access.authenticate(state.fixture, request.headers)
    return JSONResponse(state.responses.get(account.project, response_id))


@router.delete("/responses/{response_id}", response_model=None)
async def delete_response(request: Request, response_id: str) -> Response:
    state = server_state(request)
    account = access.authenticate(state.fixture, request.headers)
    return JSONResponse(state.responses.delete(account.project, response_id))
