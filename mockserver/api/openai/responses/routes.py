"""``POST /v1/responses``, ``POST /v1/responses/input_tokens``, and per stored response: ``GET``,
``DELETE``, ``POST .../cancel`` and ``GET .../input_items``.

The request models are built with the routes; the family's pipeline (planning, the response's lifecycle,
its events) loads with the first request that needs it, not at start-up, and is kept from then on (an
``import`` statement run on every request costs about a microsecond).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.responses import Response

from mockserver import errors
from mockserver.api.handler_inputs import body_schema, parse_body, server_state
from mockserver.api.middleware import request_headers
from mockserver.api.openai.schemas import InputTokenCountRequest, ResponseCreateRequest
from mockserver.api.pipeline_entry import PipelineEntry
from mockserver.service import access

if TYPE_CHECKING:
    from mockserver.api.family import Family

router = APIRouter(prefix="/v1", tags=["responses"])


def _family() -> Family[Any]:
    """The Responses family, imported with the first request."""
    from mockserver.api.openai.responses.family import RESPONSES_FAMILY

    return RESPONSES_FAMILY


_PIPELINE = PipelineEntry(_family)


@router.post("/responses", response_model=None, openapi_extra=body_schema(ResponseCreateRequest))
async def create_response(request: Request) -> Response:
    """Create a response, paced at the resolved service tier's speed, and store it unless ``store`` is false.
    A ``background`` response is answered at once, ``queued``; poll ``GET`` for the rest."""
    serve, family = _PIPELINE.loaded()
    return await serve(request, family)


# Declared before the /responses/{response_id} routes, which would otherwise shadow it.
@router.post("/responses/input_tokens", response_model=None, openapi_extra=body_schema(InputTokenCountRequest))
async def count_input_tokens(request: Request) -> Response:
    """The input tokens a response to this request would be billed, without creating it."""
    from mockserver.api.openai.responses import input_tokens, lifecycle

    state = server_state(request)
    account = access.authenticate(state.fixture, request_headers(request.scope))
    body, _ = await parse_body(request, InputTokenCountRequest)
    previous = await lifecycle.earlier_turn(state, account.project, body.previous_response_id)
    return JSONResponse(await input_tokens.input_token_count(state, account, body, previous))


@router.get("/responses/{response_id}", response_model=None)
async def retrieve_response(request: Request, response_id: str) -> Response:
    """A stored response of the caller's project: queued (background) or in progress until its schedule ends."""
    state = server_state(request)
    account = access.authenticate(state.fixture, request_headers(request.scope))
    if request.query_params.get("stream", "").lower() == "true":
        # Resuming a stream from a stored response is not simulated: say so rather than send JSON
        # that an SSE reader would take for an empty stream.
        raise errors.InvalidRequestError(
            "Streaming a stored response (stream=true) is not supported by mockserver; retrieve it without "
            "stream, or create it with stream=true.",
            param="stream",
            code="unsupported_parameter",
        )
    return JSONResponse(await state.responses.get(account.project, response_id))


@router.delete("/responses/{response_id}", response_model=None)
async def delete_response(request: Request, response_id: str) -> Response:
    state = server_state(request)
    account = access.authenticate(state.fixture, request_headers(request.scope))
    return JSONResponse(await state.responses.delete(account.project, response_id))


@router.post("/responses/{response_id}/cancel", response_model=None)
async def cancel_response(request: Request, response_id: str) -> Response:
    """Cancel a background response; any other response answers 400, as live."""
    state = server_state(request)
    account = access.authenticate(state.fixture, request_headers(request.scope))
    return JSONResponse(await state.responses.cancel(account.project, response_id))


@router.get("/responses/{response_id}/input_items", response_model=None)
async def list_input_items(request: Request, response_id: str) -> Response:
    """The input items of a stored response, as a cursor page (``after``, ``limit``, ``order``)."""
    from mockserver.api.openai.responses import input_items

    state = server_state(request)
    account = access.authenticate(state.fixture, request_headers(request.scope))
    items = await state.responses.input_items(account.project, response_id)
    return JSONResponse(input_items.page(items, request.query_params))
