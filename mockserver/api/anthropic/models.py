"""``GET /v1/models`` and ``GET /v1/models/{id}`` in Anthropic's shape, for requests with
Anthropic's headers (:mod:`.family`); the same paths answer in OpenAI's shape otherwise.

The list holds the models served on Anthropic's API (``api: anthropic``) that the key may
see, newest first as Anthropic lists them, with ``limit``, ``after_id`` and ``before_id``
paging (``has_more``, ``first_id``, ``last_id``), which the SDKs' auto-pagination follows.
"""

from __future__ import annotations

import datetime
from typing import Any

from fastapi import APIRouter, Query, Request

from mockserver.api.anthropic import auth
from mockserver.api.anthropic.errors import invalid_request
from mockserver.api.anthropic.family import AnthropicRoute
from mockserver.api.handler_inputs import server_state
from mockserver.config.fixture import ModelSpec
from mockserver.service import access

router = APIRouter(prefix="/v1", tags=["anthropic"], route_class=AnthropicRoute)

DEFAULT_LIMIT = 20
MAX_LIMIT = 1000


def model_info(model: ModelSpec) -> dict[str, Any]:
    created = datetime.datetime.fromtimestamp(model.created, datetime.UTC)
    return {
        "type": "model",
        "id": model.id,
        "display_name": model.display_name or model.id,
        "created_at": created.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "max_input_tokens": model.context_window,
        "max_tokens": model.max_output_tokens,
        "lifecycle": "active",
    }


@router.get("/models", include_in_schema=False)  # the OpenAPI document keeps OpenAI's shape of this path
async def list_models(
    request: Request,
    limit: int = Query(default=DEFAULT_LIMIT),
    after_id: str | None = Query(default=None),
    before_id: str | None = Query(default=None),
) -> dict[str, Any]:
    fixture = server_state(request).fixture
    account = auth.authenticate(fixture, request.headers)
    if not 1 <= limit <= MAX_LIMIT:
        raise invalid_request(f"limit: Input should be between 1 and {MAX_LIMIT}")
    models = sorted(access.visible_models(fixture, account, "anthropic"), key=lambda m: -m.created)
    ids = [m.id for m in models]
    if after_id is not None:
        start = ids.index(after_id) + 1 if after_id in ids else len(ids)
        page, more = models[start : start + limit], start + limit < len(models)
    elif before_id is not None:
        end = ids.index(before_id) if before_id in ids else 0
        page, more = models[max(0, end - limit) : end], end - limit > 0
    else:
        page, more = models[:limit], limit < len(models)
    return {
        "data": [model_info(m) for m in page],
        "has_more": more,
        "first_id": page[0].id if page else None,
        "last_id": page[-1].id if page else None,
    }


@router.get("/models/{model_id:path}", include_in_schema=False)
async def retrieve_model(model_id: str, request: Request) -> dict[str, Any]:
    fixture = server_state(request).fixture
    account = auth.authenticate(fixture, request.headers)
    return model_info(access.find_model(fixture, account, model_id, "anthropic"))
