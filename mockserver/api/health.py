"""``GET /health`` (liveness) and ``GET /ready`` (readiness).

Liveness says the process serves HTTP; it stays 200 whatever the shared state does, so an
orchestrator never restarts a replica only because Redis is away. Readiness says the server can
answer requests: with ``--state redis://...`` it asks Redis for a ``PING`` on each probe and answers
503 while Redis is unreachable (every API request would get the 503 ``state_unavailable`` then),
200 again as soon as Redis answers. A server in memory mode is ready whenever it is live.
``mockserver health`` and the image's ``HEALTHCHECK`` probe readiness."""

from fastapi import APIRouter, Request
from starlette.responses import JSONResponse

from mockserver.api.handler_inputs import server_state
from mockserver.state.shared import unreachable_because

router = APIRouter(tags=["health"])


@router.get("/health")
async def health() -> dict[str, str]:
    """Liveness: answers 200 as soon as the server accepts requests."""
    return {"status": "ok"}


@router.get("/ready", response_model=None)
async def ready(request: Request) -> dict[str, str] | JSONResponse:
    """Readiness: 200 when the server can answer requests; 503, with the reason, while the shared
    state (``--state redis://...``) is unreachable."""
    shared = server_state(request).shared
    reason = None if shared is None else await unreachable_because(shared)
    if reason is not None:
        return JSONResponse({"status": "unavailable", "reason": reason}, status_code=503)
    return {"status": "ready"}
