"""What a recorded exchange says about itself: model, tier, tokens and timing, for each API's shape.

Used by ``cassette show`` (one row per exchange), ``calibrate`` (rates per model and tier) and
``whatif`` (model time per call). Only what the recording holds is read; a figure the reply does
not carry (no usage in a stream without ``include_usage``) is ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from mockserver.cassettes.format import Record

# The tier a reply names, in the tier names of the fixture.
_TIER_FOR_SERVICE_TIER = {
    None: "default", "auto": "default", "default": "default", "scale": "default", "standard": "default",
    "standard_only": "default", "priority": "priority", "fast": "priority", "flex": "flex",
    "ultrafast": "ultrafast",
}  # fmt: skip
ULTRAFAST_SUFFIX = "-ultrafast"


@dataclass(frozen=True)
class Figures:
    model: str | None
    tier: str
    stream: bool
    status: int
    input_tokens: int | None
    output_tokens: int | None  # reasoning included
    reasoning_tokens: int
    ttft_ms: float | None  # offset of the first event carrying output (text, reasoning or tool arguments)
    last_token_ms: float | None
    duration_ms: float
    token_events: int  # events carrying output
    started_at: float  # seconds since the epoch, when the request was sent

    @property
    def ended_at(self) -> float:
        return self.started_at + self.duration_ms / 1000


def figures(record: Record) -> Figures:
    request = record.request.body if isinstance(record.request.body, dict) else {}
    response = record.response
    payloads = [_json(e.data) for e in response.events]
    usage, served_tier, model = _usage_and_tier(record.api, response.body, payloads)
    model = model or _str(request.get("model"))
    output = _int(usage.get("completion_tokens", usage.get("output_tokens")))
    details = usage.get("completion_tokens_details") or usage.get("output_tokens_details") or {}
    token_offsets = [e.ms for e, p in zip(response.events, payloads, strict=True) if carries_output(record.api, p)]
    return Figures(
        model=model,
        tier=tier_of(request, served_tier, model),
        stream=response.stream,
        status=response.status,
        input_tokens=_int(usage.get("prompt_tokens", usage.get("input_tokens"))),
        output_tokens=output,
        reasoning_tokens=_int(details.get("reasoning_tokens") if isinstance(details, dict) else None) or 0,
        ttft_ms=token_offsets[0] if token_offsets else None,
        last_token_ms=token_offsets[-1] if token_offsets else None,
        duration_ms=response.duration_ms,
        token_events=len(token_offsets),
        started_at=started_at(record),
    )


def tier_of(request: dict[str, Any], served: str | None, model: str | None) -> str:
    """The tier that served a reply: what the reply says, else what the request asked for."""
    if model and model.endswith(ULTRAFAST_SUFFIX):
        return "ultrafast"
    if served is None and request.get("speed") == "fast":
        return "priority"
    asked = served if served is not None else _str(request.get("service_tier"))
    return _TIER_FOR_SERVICE_TIER.get(asked, asked or "default")


def started_at(record: Record) -> float:
    return datetime.fromisoformat(record.recorded_at.replace("Z", "+00:00")).timestamp()


def _usage_and_tier(api: str, body: Any, payloads: list[Any]) -> tuple[dict[str, Any], str | None, str | None]:
    usage: dict[str, Any] = {}
    tier: str | None = None
    model: str | None = None
    objects = [body] if isinstance(body, dict) else [p for p in payloads if isinstance(p, dict)]
    for item in objects:
        inner = item.get("response") or item.get("message") or item  # Responses events, message_start
        if not isinstance(inner, dict):
            continue
        if isinstance(inner.get("usage"), dict):
            usage = {**usage, **inner["usage"]}
        if isinstance(item.get("usage"), dict) and item is not inner:
            usage = {**usage, **item["usage"]}  # message_delta's running output count
        tier = _str(inner.get("service_tier")) or tier
        model = _str(inner.get("model")) or model
    if api == "messages" and isinstance(usage.get("speed"), str):
        tier = "fast" if usage["speed"] == "fast" else tier
    if api == "messages" and tier == "standard_only":
        tier = None
    return usage, tier, model


def carries_output(api: str, payload: Any) -> bool:
    if not isinstance(payload, dict):
        return False
    if api == "chat.completions":
        for choice in payload.get("choices") or []:
            delta = choice.get("delta") or {}
            if (
                delta.get("content")
                or delta.get("tool_calls")
                or delta.get("reasoning_content")
                or delta.get("refusal")
            ):
                return True
        return False
    if api == "responses":
        kind = payload.get("type", "")
        return isinstance(kind, str) and kind.endswith(".delta")
    if api == "messages":
        return payload.get("type") == "content_block_delta"
    return False


def _json(data: str) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
