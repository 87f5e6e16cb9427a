"""``GET /metrics``: the server's Prometheus metrics (:mod:`mockserver.operations.metrics`)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from mockserver.api.handler_inputs import server_state
from mockserver.operations.metrics import METRICS_PATH

router = APIRouter(tags=["metrics"])


@router.get(METRICS_PATH, response_class=Response)
async def prometheus_metrics(request: Request) -> Response:
    """Counters, gauges and histograms in the Prometheus text format, for a scraper."""
    metrics = server_state(request).metrics
    return Response(metrics.render(), media_type=metrics.content_type)
