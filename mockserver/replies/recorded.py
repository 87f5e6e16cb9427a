"""The second source of replies, beside :mod:`.planner`: a recording, paced, and its whole body.

A recorded reply is sent as the upstream sent it (its events, ids, text, tool calls, reasoning and
usage), not rebuilt from tokens, so it stays faithful to the upstream rather than to this server's
own engine; what is planned here is when each event goes out. :mod:`mockserver.harness.replay`
chooses the recording (as :mod:`mockserver.harness.scripted` chooses a script rule).

Three timings (``--replay-timing``), each stretched by the time scale:

- ``recorded``: every event at its recorded offset from the request, so the client sees the
  recorded TTFT and duration.
- ``tier``: the recorded content re-paced at the profile of the tier the request asked for:
  the first token after that tier's TTFT, then the output tokens (reasoning included) at its
  rate, spread evenly over the events that carry output. Reasoning the API does not stream
  (Chat Completions, Responses without a summary) is waited for before the first event, as
  a generated reply does. ``service_tier`` in the reply says the tier served.
- ``instant``: everything at once.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import orjson

from mockserver import errors
from mockserver.cassettes import figures
from mockserver.cassettes.format import Record
from mockserver.engine.pacing import Pacer, Schedule
from mockserver.engine.streaming import Item
from mockserver.harness.replay.options import ReplayTiming
from mockserver.replies import recorded_shapes as shapes
from mockserver.service.access import Admission
from mockserver.service.exchange import Usage

_TYPED_APIS = ("responses", "messages")


@dataclass(frozen=True)
class ReplayPlan:
    record: Record
    schedule: Schedule
    usage: Usage
    frames: list[tuple[float, bytes]]  # each event's deadline on the server clock, and its bytes
    whole: dict[str, Any] | None  # the body of a reply that is not streamed

    def shifted(self, seconds: float) -> ReplayPlan:
        """This plan with every deadline ``seconds`` later (a wait for a capacity slot is part of the TTFT)."""
        frames = [(due + seconds, frame) for due, frame in self.frames]
        return replace(self, schedule=self.schedule.shifted(seconds), frames=frames)

    def events(self, pacer: Pacer) -> Iterator[Item]:
        for due, frame in self.frames:
            yield due
            yield frame

    def body(self) -> dict[str, Any]:
        assert self.whole is not None
        return self.whole


def plan_replay(
    record: Record,
    admission: Admission,
    *,
    start: float,
    stream: bool,
    include_usage: bool,
    timing: ReplayTiming,
    time_scale: float,
    chat_ultrafast_tier: str,
    family: shapes.BodyStream | None = None,
) -> ReplayPlan:
    """The plan of one replay. ``family`` streams a recorded body that was not streamed (Responses,
    Messages; Chat's is :func:`~mockserver.replies.recorded_shapes.stream_of_body`'s own)."""
    response = record.response
    if response.status >= 400:
        raise recorded_error(record)
    api = record.api
    if response.stream:
        events = [(e.event, e.data, e.ms) for e in response.events]
    elif stream:
        events = _spread(api, shapes.stream_of_body(api, response.body, include_usage, family), response.duration_ms)
    else:
        events = []
    served = _served_tier(api, admission.tier.tier, chat_ultrafast_tier) if timing == "tier" else None
    if served is not None:
        events = [(n, _with_tier(d, served), ms) for n, d, ms in events]
    shown = figures.figures(record)
    offsets, ttft_s, end_s = _offsets(record, events, shown, admission, timing)
    whole: dict[str, Any] | None = None
    if not stream:
        if response.stream:
            whole = shapes.body_of_stream(api, [(n, d) for n, d, _ in events])
        else:
            whole = response.body if isinstance(response.body, dict) else {"text": response.text}
            if served is not None:
                whole = orjson.loads(_with_tier(orjson.dumps(whole).decode(), served))
    tokens = max(1, shown.output_tokens or 0)
    schedule = Schedule(
        start=start,
        ttft=ttft_s * time_scale,
        interval=max(0.0, end_s - ttft_s) * time_scale / tokens,
        total_tokens=tokens,
    )
    typed = api in _TYPED_APIS
    frames = [
        (start + at * time_scale, _frame(name, data, typed))
        for (name, data, _), at in zip(events, offsets, strict=True)
    ]
    usage = Usage(shown.input_tokens or 0, shown.output_tokens or 0, shown.reasoning_tokens)
    return ReplayPlan(record, schedule, usage, frames, whole)


def _spread(api: str, events: list[shapes.Event], duration_ms: float) -> list[tuple[str | None, str, float]]:
    """A stream made of a recorded body, its events given offsets: those carrying output evenly over the
    recorded duration (the last at its end), what comes before the first at once, what follows at the end."""
    carrying = [figures.carries_output(api, _json(data)) for _, data in events]
    count, seen, offsets = sum(carrying), 0, []
    for carries in carrying:
        seen += carries
        offsets.append(duration_ms * seen / count if count else duration_ms)
    if count:
        last = max(i for i, c in enumerate(carrying) if c)
        offsets[last + 1 :] = [duration_ms] * (len(offsets) - last - 1)
    return [(name, data, ms) for (name, data), ms in zip(events, offsets, strict=True)]


def _offsets(
    record: Record,
    events: list[tuple[str | None, str, float]],
    shown: figures.Figures,
    admission: Admission,
    timing: ReplayTiming,
) -> tuple[list[float], float, float]:
    """Each event's offset from the request, the first token's and the end's, in seconds (before the time scale)."""
    end = record.response.duration_ms / 1000
    if timing == "instant":
        return [0.0] * len(events), 0.0, 0.0
    if timing == "recorded":
        ttft = (shown.ttft_ms if shown.ttft_ms is not None else record.response.duration_ms) / 1000
        return [ms / 1000 for _, _, ms in events], ttft, end
    profile = admission.profile
    rate, ttft = profile.tokens_per_second, profile.ttft_ms / 1000
    carrying = [figures.carries_output(record.api, _json(data)) for _, data, _ in events]
    count = sum(carrying)
    total = max(shown.output_tokens or 0, count)
    hidden = shown.reasoning_tokens if not _streams_reasoning(record.api, events) else 0
    visible = max(total - hidden, count)
    end = ttft + (hidden + visible) / rate
    offsets, due, seen = [], 0.0, 0
    for carries in carrying:
        if carries:
            seen += 1
            due = ttft + max(0.0, hidden + seen * visible / count - 1) / rate
        offsets.append(due if seen else 0.0)  # what comes before the first output goes out at once
    if carrying and seen:
        last = max(i for i, c in enumerate(carrying) if c)
        offsets[last + 1 :] = [end] * (len(offsets) - last - 1)
    return offsets, ttft + max(0.0, hidden + visible / max(count, 1) - 1) / rate, end


def _streams_reasoning(api: str, events: list[tuple[str | None, str, float]]) -> bool:
    if api == "messages":
        return True  # thinking arrives as thinking_delta events
    if api == "responses":
        return any(name is not None and "reasoning" in name and name.endswith(".delta") for name, _, _ in events)
    return any('"reasoning_content"' in data for _, data, _ in events)


def _served_tier(api: str, tier: str, chat_ultrafast_tier: str) -> str | None:
    if api == "messages":
        return None  # Anthropic's replies name no tier of this kind
    if api == "chat.completions" and tier == "ultrafast":
        return chat_ultrafast_tier
    return tier


def _with_tier(data: str, tier: str) -> str:
    """``data`` with its ``service_tier`` fields (top level, or in a Responses event's ``response``) set to ``tier``."""
    if '"service_tier"' not in data:
        return data
    payload = orjson.loads(data)
    for target in (payload, payload.get("response") if isinstance(payload, dict) else None):
        if isinstance(target, dict) and "service_tier" in target:
            target["service_tier"] = tier
    return orjson.dumps(payload).decode()


def _frame(name: str | None, data: str, typed: bool) -> bytes:
    lines = "".join(f"data: {line}\n" for line in data.split("\n"))
    head = f"event: {name}\n" if typed and name is not None else ""
    return (head + lines + "\n").encode()


def _json(data: str) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None


def recorded_error(record: Record) -> errors.MockAPIError:
    """A recorded failure, raised again: its status, and its message, type, param and code where it has them."""
    body = record.response.body if isinstance(record.response.body, dict) else {}
    found = body.get("error")
    detail: dict[str, Any] = found if isinstance(found, dict) else {}
    error = errors.MockAPIError(
        detail.get("message") or record.response.text or "The recorded request failed.",
        param=detail.get("param"),
        code=detail.get("code"),
        type=detail.get("type") or "server_error",
        headers={k: v for k, v in record.response.headers.items() if k in ("retry-after", "retry-after-ms")},
    )
    error.status_code = record.response.status
    return error
