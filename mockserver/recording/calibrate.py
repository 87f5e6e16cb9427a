"""``mockserver calibrate``: the rates a recorded service really ran at, as a fixture fragment.

From each recorded stream that succeeded and reports its usage (on Chat Completions, streams
asked with ``stream_options: {"include_usage": true}``), per model and tier:

- tokens per event: the output tokens over the events that carry output;
- tokens/s: the tokens after the first such event over the time from it to the last one (so the
  TTFT and the tail do not count), reasoning the API does not stream left out;
- TTFT: the offset of the first output event, less the time its own tokens took at that rate
  (mockserver sends an event when its last token is due).

The fragment starts with ``extends: default``, each figure's source in a comment. One model
recorded: the tier-level ``profiles``. Several: full ``models`` entries (under ``extends`` a list
replaces the whole list), every model of the base fixture kept, the recorded ones with their
``profiles``. A tier with fewer than :data:`MIN_STREAMS` streams is reported, not written.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import yaml

from mockserver.config.fixture import Fixture

if TYPE_CHECKING:
    from mockserver.cassettes.format import Record

MIN_STREAMS = 5
TIERS = ("default", "priority", "flex", "ultrafast")


@dataclass(frozen=True)
class Measured:
    model: str
    tier: str
    streams: int
    ttft_p50_ms: float
    ttft_p90_ms: float
    rate_median: float
    rate_p10: float
    rate_p90: float
    tokens_per_event: float
    first: float  # when the first and the last of these streams were recorded (epoch seconds)
    last: float

    @property
    def enough(self) -> bool:
        return self.streams >= MIN_STREAMS


def measure(records: Sequence[Record]) -> list[Measured]:
    from mockserver.cassettes.figures import figures  # the records' models: loaded by the command that reads them

    samples: dict[tuple[str, str], list[tuple[float, float, float, float]]] = defaultdict(list)
    for record in records:
        f = figures(record)
        if not f.stream or f.status >= 400 or f.token_events < 2 or not f.output_tokens or f.model is None:
            continue
        assert f.ttft_ms is not None and f.last_token_ms is not None
        hidden = f.reasoning_tokens if record.api == "chat.completions" else 0
        visible = max(f.output_tokens - hidden, f.token_events)
        per_event = visible / f.token_events
        span_s = (f.last_token_ms - f.ttft_ms) / 1000
        if span_s <= 0:
            continue
        rate = (visible - per_event) / span_s
        ttft = f.ttft_ms - 1000 * (hidden + per_event - 1) / rate
        samples[(f.model, f.tier)].append((max(0.0, ttft), rate, per_event, f.started_at))
    found = []
    for (model, tier), rows in sorted(samples.items()):
        ttfts = sorted(r[0] for r in rows)
        rates = sorted(r[1] for r in rows)
        found.append(
            Measured(
                model, tier, len(rows), _pct(ttfts, 50), _pct(ttfts, 90), statistics.median(rates),
                _pct(rates, 10), _pct(rates, 90), statistics.median(r[2] for r in rows),
                min(r[3] for r in rows), max(r[3] for r in rows),
            )
        )  # fmt: skip
    return found


def _pct(values: list[float], p: int) -> float:
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[p - 1]


def report(found: Sequence[Measured]) -> str:
    heads = ("model", "tier", "streams", "TTFT p50", "p90", "tok/s", "p10-p90", "tok/event")
    lines = ["{:<24} {:<10} {:>7} {:>9} {:>7} {:>8} {:>15} {:>9}".format(*heads)]
    for m in found:
        note = "" if m.enough else f"  (fewer than {MIN_STREAMS} streams: not written)"
        lines.append(
            f"{m.model:<24} {m.tier:<10} {m.streams:>7} {m.ttft_p50_ms:>9.0f} {m.ttft_p90_ms:>7.0f} "
            f"{m.rate_median:>8.1f} {f'{m.rate_p10:.0f}-{m.rate_p90:.0f}':>15} {m.tokens_per_event:>9.2f}{note}"
        )
    return "\n".join(lines)


def fragment(found: Sequence[Measured], source: str, base: Fixture) -> str:
    """The fixture fragment, as YAML text with comments; only tiers with enough streams."""
    kept = [m for m in found if m.enough]
    models = sorted({m.model for m in kept})
    dates = f"{_date(min(m.first for m in kept))} to {_date(max(m.last for m in kept))}" if kept else "no streams"
    head = [
        f"# Calibrated by `mockserver calibrate` from {source} (recorded {dates}).",
        "# Each figure: TTFT p50 and tokens/s median over the recorded streams; tokens_per_chunk: tokens per event;",
        "# each profile's `source` names its streams and their spread.",
        "extends: default",
    ]
    if len(models) <= 1:
        body = {"profiles": {m.tier: _profile(m, source) for m in kept}}
        return "\n".join(head) + "\n" + yaml.safe_dump(body, sort_keys=False)
    entries = []
    for spec in base.models:
        entry = spec.model_dump(mode="json", exclude_defaults=True)
        entry["id"] = spec.id
        own = {m.tier: _profile(m, source) for m in kept if m.model == spec.id}
        if own:
            entry["profiles"] = {**entry.get("profiles", {}), **own}
        entries.append(entry)
    for model in models:
        if base.model(model) is None:
            entries.append({"id": model, "profiles": {m.tier: _profile(m, source) for m in kept if m.model == model}})
    text = yaml.safe_dump({"models": entries}, sort_keys=False)
    return "\n".join(head) + "\n" + text


def _profile(m: Measured, source: str) -> dict[str, object]:
    return {
        "tokens_per_second": round(m.rate_median, 1),
        "ttft_ms": round(m.ttft_p50_ms, 1),
        "tokens_per_chunk": max(1, round(m.tokens_per_event)),
        "source": f"calibrated from {source}: {m.streams} streams, TTFT p90 {m.ttft_p90_ms:.0f} ms, "
        f"tokens/s p10-p90 {m.rate_p10:.0f}-{m.rate_p90:.0f}",
    }


def _date(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M UTC")
