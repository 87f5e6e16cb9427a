"""``whatif --drive URL``: replay a recorded session against a running server at each tier, and time it.

The server replays the same cassette re-paced at the tier asked for (``mockserver serve --replay
SESSION --replay-timing tier --time-scale X``). Each call is sent in the recorded order, asking for
the tier (``service_tier``, or ``speed: "fast"`` on Anthropic's priority tier), after the recorded
client time (times X) has passed since the previous reply ended; the whole run is timed on the
wall clock and divided by X, so a short run stands for the real one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import httpx

from mockserver.recording.whatif import Call, TierFigures

DRIVE_TIMEOUT_S = 600.0
_SERVICE_TIER = {"default": "default", "priority": "priority", "flex": "flex", "ultrafast": "ultrafast"}


def drive(
    url: str,
    calls: Sequence[Call],
    tier: str,
    *,
    key: str,
    time_scale: float,
    standard_s: float | None,
    recorded_s: float | None,
    clock: Callable[[], float] = time.perf_counter,
    sleep: Callable[[float], None] = time.sleep,
) -> TierFigures:
    """The measured figures of the whole session at ``tier`` (cost is left to the computed row)."""
    scale = time_scale or 1.0
    model = 0.0
    with httpx.Client(base_url=url.rstrip("/"), timeout=DRIVE_TIMEOUT_S) as client:
        started = clock()
        for call in calls:
            if call.client_s > 0 and time_scale > 0:
                sleep(call.client_s * time_scale)
            began = clock()
            _send(client, call, tier, key)
            model += clock() - began
        total = clock() - started
    e2e, model_s = total / scale, model / scale
    return TierFigures(
        tier, e2e, model_s, max(0.0, e2e - model_s), None if recorded_s is None else recorded_s / e2e if e2e else 0.0,
        standard_s / e2e if standard_s and e2e else None, 0.0, measured=True,
    )  # fmt: skip


def _send(client: httpx.Client, call: Call, tier: str, key: str) -> None:
    request = call.record.request
    body: dict[str, Any] = dict(request.body) if isinstance(request.body, dict) else {}
    headers = {"authorization": f"Bearer {key}", **request.headers}
    if call.record.api == "messages":
        headers["x-api-key"] = key
        body.pop("speed", None)
        if tier == "priority":
            body["speed"] = "fast"
    else:
        body["service_tier"] = _SERVICE_TIER.get(tier, tier)
    with client.stream(request.method, request.path, json=body, headers=headers) as reply:
        for _ in reply.iter_raw():
            pass
        if reply.status_code >= 400:
            reply.read()
            raise RuntimeError(
                f"{request.method} {request.path} at tier {tier}: {reply.status_code} {reply.text[:300]}"
            )
