"""The control plane for tests, under ``/_mock/``: runtime configuration, the request journal, reset.

No API key is needed. Every endpoint honours the ``x-mock-test-id`` header (or a
``test_id`` query parameter), which scopes the journal and the fault counters
to one test.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from mockserver import errors
from mockserver.api.handler_inputs import server_state
from mockserver.config import suggestions
from mockserver.config.fixture import Fixture
from mockserver.engine import jsonbody
from mockserver.harness.journal import TEST_ID_HEADER, JournalQuery
from mockserver.operations import configuration

# The replies' models are built on first use (a reply, or the OpenAPI document), not when the server starts.
ON_FIRST_USE = ConfigDict(defer_build=True)

router = APIRouter(prefix="/_mock", tags=["control plane"])


class MockConfig(Fixture):
    """The runtime configuration: the settings that can change at runtime, beside the fixture's fields.

    Faults are shown in their one-line form (``status=503;times=1``); API keys are masked."""

    model_config = ON_FIRST_USE

    time_scale: float = Field(description="Every delay is multiplied by this; 0 answers at once.")
    seed: int = Field(description="Global seed for generated text, ids and random faults.")


class ConfigPatch(BaseModel):
    """A JSON merge patch (RFC 7396) of :class:`MockConfig`: objects merge, lists replace, null resets."""

    model_config = {"extra": "allow"}
    time_scale: float | None = None
    seed: int | None = None


class UsageEntry(BaseModel):
    model_config = ON_FIRST_USE

    input_tokens: int
    output_tokens: int
    reasoning_tokens: int
    total_tokens: int


class JournalEntry(BaseModel):
    """One request as the server saw it. API keys are masked everywhere in it."""

    model_config = ON_FIRST_USE

    seq: int = Field(description="Rises by one per recorded request.")
    request_id: str
    test_id: str | None = Field(description="The x-mock-test-id header the request carried.")
    method: str
    path: str
    headers: dict[str, str]
    key: str | None = Field(description="The API key, masked.")
    organization: str | None
    project: str | None
    body: Any
    model: str | None
    stream: bool
    requested_tier: str | None = Field(description="service_tier as asked for.")
    tier: str | None = Field(description="The tier that served the request.")
    downgraded: bool
    status: int | None = Field(description="HTTP status; 499 when the client left before the reply started.")
    error_type: str | None = Field(
        default=None, description="The error's type, as the client read it; null when the reply was no error."
    )
    code: str | None = Field(
        default=None, description="The error's code, e.g. rate_limit_exceeded; null when none or no error."
    )
    param: str | None = Field(
        default=None, description="The error's param: service_tier for a capacity 429, null for a rate-limit 429."
    )
    error_message: str | None = Field(
        default=None, description="The error's message as the client read it (keys masked); null when no error."
    )
    usage: UsageEntry | None
    fault: str | None = Field(description="The fault injected, in its one-line form.")
    disconnected: bool = Field(description="The reply never finished: the client left or a fault closed it.")
    body_dropped_bytes: int | None = Field(
        default=None, description="The body was larger than the whole journal (journal_bytes) and is not kept."
    )
    prefill_ms: float | None = Field(
        default=None, description="The part of the TTFT spent reading the prompt (prefill_tokens_per_second)."
    )
    queued_ms: float | None = Field(
        default=None, description="How long the request waited for an Ultrafast slot (capacity.queue_ms)."
    )
    queue_outcome: str | None = Field(
        default=None, description="How that wait ended: served, timed_out, left, or full (too many waiting)."
    )
    started_at: float = Field(description="Unix time the request arrived.")
    duration_ms: float | None


class JournalPage(BaseModel):
    model_config = ON_FIRST_USE

    object: Literal["list"] = "list"
    data: list[JournalEntry]


class JournalCleared(BaseModel):
    model_config = ON_FIRST_USE

    object: Literal["journal.cleared"] = "journal.cleared"
    deleted: int


class ResetDone(BaseModel):
    model_config = ON_FIRST_USE

    object: Literal["reset"] = "reset"
    scope: str = Field(description="'all', or the test id that was reset.")


def _scope(request: Request, test_id: str | None) -> str | None:
    return test_id if test_id is not None else request.headers.get(TEST_ID_HEADER)


@router.get("/config", summary="Read the runtime configuration", responses={200: {"model": MockConfig}})
async def get_config(request: Request) -> JSONResponse:
    state = server_state(request)
    return JSONResponse(configuration.masked_document(state.settings, state.fixture))


@router.patch(
    "/config",
    summary="Change the runtime configuration (JSON merge patch, all or nothing)",
    responses={200: {"model": MockConfig}},
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": ConfigPatch.model_json_schema()},
                "application/merge-patch+json": {"schema": ConfigPatch.model_json_schema()},
            },
        }
    },
)
async def patch_config(request: Request) -> JSONResponse:
    state = server_state(request)
    raw = await request.body()
    patch = jsonbody.loads(raw, state.settings.max_json_depth) if raw else None
    await state.configure_everywhere(patch)
    return JSONResponse(configuration.masked_document(state.settings, state.fixture))


@router.get("/requests", summary="Read the request journal, oldest first", response_model=JournalPage)
async def list_requests(
    request: Request,
    path: str | None = Query(default=None, description="Only this exact path, e.g. /v1/chat/completions."),
    model: str | None = Query(default=None, description="Only this model (as resolved or as requested)."),
    key: str | None = Query(default=None, description="Only this API key (shown masked)."),
    method: str | None = Query(default=None, description="Only this HTTP method."),
    tier: str | None = Query(default=None, description="Only requests served (or refused) on this tier."),
    status: int | None = Query(default=None, description="Only replies with this HTTP status."),
    code: str | None = Query(default=None, description="Only error replies with this code, e.g. rate_limit_exceeded."),
    param: str | None = Query(default=None, description="Only error replies with this param, e.g. service_tier."),
    error_type: str | None = Query(default=None, description="Only error replies of this type, e.g. tokens."),
    test_id: str | None = Query(
        default=None, description="Only this test's requests; default: the x-mock-test-id header."
    ),
    limit: int | None = Query(
        default=None, ge=1, description="Only the newest N matching entries (still oldest first)."
    ),
) -> JSONResponse:
    _known_filters_only(request)
    state = server_state(request)
    query = JournalQuery(
        test_id=_scope(request, test_id),
        path=path,
        model=model,
        key=key,
        method=method,
        tier=tier,
        status=status,
        code=code,
        param=param,
        error_type=error_type,
        limit=limit,
    )
    shown = await state.journal.read(query, [a.key for a in state.fixture.accounts])
    return JSONResponse({"object": "list", "data": [s.data for s in shown]})


JOURNAL_FILTERS = (
    "path", "model", "key", "method", "tier", "status", "code", "param", "error_type", "test_id", "limit",
)  # fmt: skip


def _known_filters_only(request: Request) -> None:
    """A misspelled filter (``?cod=``, ``?type=``) would be ignored and every entry returned: refuse it."""
    for name in request.query_params:
        if name not in JOURNAL_FILTERS:
            raise errors.InvalidRequestError(
                f"Unrecognized query parameter: '{name}': {suggestions.unknown(name, JOURNAL_FILTERS, 'filter')}",
                param=name,
                code="unknown_parameter",
            )


@router.delete("/requests", summary="Clear the journal (or one test's part of it)", response_model=JournalCleared)
async def clear_requests(
    request: Request,
    test_id: str | None = Query(
        default=None, description="Only this test's entries; default: the x-mock-test-id header."
    ),
) -> JournalCleared:
    deleted = await server_state(request).journal.forget(_scope(request, test_id))
    return JournalCleared(deleted=deleted)


@router.post("/reset", summary="Back to the start: configuration, journal, fault counters", response_model=ResetDone)
async def reset(
    request: Request,
    test_id: str | None = Query(
        default=None,
        description="Reset only this test's journal and fault counters; default: the x-mock-test-id header.",
    ),
) -> ResetDone:
    state = server_state(request)
    scope = _scope(request, test_id)
    if scope is None:
        await state.reset()
        return ResetDone(scope="all")
    await state.reset_scope(scope)
    return ResetDone(scope=scope)
