"""``GET /v1/models`` and ``GET /v1/models/{id}``, filtered by what the key may use."""

from typing import Any

from fastapi import APIRouter, Request

from mockserver.api.handler_inputs import server_state
from mockserver.config.fixture import ModelSpec
from mockserver.service import access

router = APIRouter(prefix="/v1", tags=["models"])


def model_object(model: ModelSpec) -> dict[str, Any]:
    return {"id": model.id, "object": "model", "created": model.created, "owned_by": model.owned_by}


@router.get("/models")
async def list_models(request: Request) -> dict[str, Any]:
    fixture = server_state(request).fixture
    account = access.authenticate(fixture, request.headers)
    return {"object": "list", "data": [model_object(m) for m in access.visible_models(fixture, account)]}


@router.get("/models/{model_id:path}")
async def retrieve_model(model_id: str, request: Request) -> dict[str, Any]:
    fixture = server_state(request).fixture
    account = access.authenticate(fixture, request.headers)
    return model_object(access.find_model(fixture, account, model_id))
