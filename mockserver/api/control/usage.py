"""``GET /_mock/usage``: the usage ledger, with totals and breakdowns, for forecasting cost."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from mockserver.api.handler_inputs import server_state
from mockserver.service import capacity, ledger

# The replies' models are built on first use (a reply, or the OpenAPI document), not when the server starts.
ON_FIRST_USE = ConfigDict(defer_build=True)

router = APIRouter(prefix="/_mock", tags=["control"])


class UsageTotals(BaseModel):
    model_config = ON_FIRST_USE

    requests: int = Field(description="Successful inference replies.")
    input_tokens: int
    output_tokens: int = Field(description="Output tokens, reasoning tokens included.")
    reasoning_tokens: int
    cached_tokens: int = Field(
        description="Of input_tokens, read from the prompt cache: OpenAI's cached_tokens, Anthropic's "
        "cache_read_input_tokens."
    )
    cache_write_tokens: int = Field(
        description="Of input_tokens, written to the prompt cache: OpenAI's cache_write_tokens, Anthropic's "
        "cache_creation_input_tokens."
    )
    total_tokens: int
    cost_usd: float = Field(description="At the fixture's prices and tier multipliers.")


class UsageRow(UsageTotals):
    key: str
    organization: str
    project: str
    model: str
    tier: str = Field(description="The tier that served the requests: default, priority, flex or ultrafast.")


class CapacityState(BaseModel):
    model_config = ON_FIRST_USE

    ultrafast_in_flight: int = Field(description="Ultrafast requests being served now, server-wide.")
    ultrafast_peak: int = Field(description="The most Ultrafast requests in flight at once since the last reset.")
    ultrafast_cap: int | None = Field(description="The server-wide cap; null means none.")


class UsageReport(BaseModel):
    model_config = ON_FIRST_USE

    object: str = "usage"
    currency: str = "usd"
    filters: dict[str, str]
    totals: UsageTotals
    by_key: dict[str, UsageTotals]
    by_model: dict[str, UsageTotals]
    by_tier: dict[str, UsageTotals]
    by_organization: dict[str, UsageTotals]
    rows: list[UsageRow] = Field(description="One row per (key, model, tier).")
    capacity: CapacityState


@router.get("/usage", response_model=UsageReport)
async def get_usage(
    request: Request,
    key: str | None = Query(default=None, description="Only this API key."),
    model: str | None = Query(default=None, description="Only this model id."),
    tier: str | None = Query(default=None, description="Only this served tier (default, priority, flex, ultrafast)."),
    organization: str | None = Query(default=None, description="Only this organization id."),
    project: str | None = Query(default=None, description="Only this project id."),
) -> dict[str, Any]:
    """What every successful inference reply used and cost, by key, model and tier.

    The totals equal the sum of the ``usage`` blocks the clients received. ``POST /_mock/reset``
    (or ``ServerState.reset()``) empties the ledger.
    """
    state = server_state(request)
    selection = ledger.UsageFilter(key=key, model=model, tier=tier, organization=organization, project=project)
    report = ledger.report(await state.store.usage(), selection)
    report["capacity"] = {
        "ultrafast_in_flight": await state.store.in_flight(capacity.SERVER_POOL),
        "ultrafast_peak": await state.store.peak(capacity.SERVER_POOL),
        "ultrafast_cap": state.fixture.capacity.ultrafast_concurrency,
    }
    return report
