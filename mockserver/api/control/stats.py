"""``GET /_mock/stats``: what the server holds right now, for soak tests and dashboards.

Every figure here must come back to its idle value once the load stops: replies held and
streams open at zero, Ultrafast slots at zero, the journal and stored responses within
their bounds, memory and file descriptors flat. ``python -m benchmarks soak`` polls it.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from mockserver.api.control import ui
from mockserver.api.handler_inputs import server_state
from mockserver.service import capacity

# The replies' models are built on first use (a reply, or the OpenAPI document), not when the server starts.
ON_FIRST_USE = ConfigDict(defer_build=True)

router = APIRouter(prefix="/_mock", tags=["control plane"])

PROC_SELF = Path("/proc/self")  # Linux; elsewhere the process figures are null


class ServerStats(BaseModel):
    model_config = ON_FIRST_USE

    process: int = Field(
        description="The id of the process that answered: with --workers N, each worker answers for itself."
    )
    replies_held: int = Field(description="Non-streaming replies waiting for their schedule to end.")
    streams_open: int = Field(description="Streamed replies being played.")
    worst_lateness_ms: float = Field(
        description="How late the latest stream event or first token went out over the last second or two, "
        "against its schedule, in milliseconds (or how long the most overdue stream has waited, if more). "
        "A few ms is a timer tick; more says the server cannot keep the promised pace."
    )
    tasks: int = Field(description="asyncio tasks alive on the server's event loop.")
    ultrafast_in_flight: int = Field(description="Ultrafast capacity slots taken, server-wide.")
    journal_entries: int = Field(description="Entries the journal holds; with --state redis://, the shared journal's.")
    journal_bytes: int = Field(
        description="Bytes the journal holds (bounded by journal_bytes): request bodies in memory; "
        "the stored entries with --state redis://."
    )
    stored_responses: int = Field(description="Stored responses kept (bounded by stored_responses).")
    rss_bytes: int | None = Field(description="Resident memory of the server process; null off Linux.")
    open_fds: int | None = Field(description="Open file descriptors of the server process; null off Linux.")
    dashboards: int = Field(default=0, description="Dashboard pages (/_mock/ui) connected to this process.")
    dashboard_cpu_seconds: float = Field(
        default=0.0, description="CPU seconds this process has spent on the dashboards' updates since it started."
    )


@router.get("/stats", summary="What the server holds right now (load, bounds, memory)", response_model=ServerStats)
async def stats(request: Request) -> ServerStats:
    state = server_state(request)
    journal = await state.journal.held()
    pages = ui.connections_of(request)
    return ServerStats(
        process=os.getpid(),
        replies_held=state.replies.active,
        streams_open=len(state.streams),
        worst_lateness_ms=round(state.streams.worst_lateness() * 1000, 3),
        tasks=len(asyncio.all_tasks()),
        ultrafast_in_flight=await state.store.in_flight(capacity.SERVER_POOL),
        journal_entries=journal.entries,
        journal_bytes=journal.bytes,
        stored_responses=await state.responses.count(),
        rss_bytes=_rss_bytes(),
        open_fds=_open_fds(),
        dashboards=pages.open,
        dashboard_cpu_seconds=round(pages.cpu_s, 6),
    )


def _rss_bytes() -> int | None:
    try:
        for line in (PROC_SELF / "status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _open_fds() -> int | None:
    try:
        return len(os.listdir(PROC_SELF / "fd"))
    except OSError:
        return None
