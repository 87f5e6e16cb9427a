"""``mockserver whatif``: a recorded session's time and cost at other tiers.

A session is a cassette's inference calls in the order they were sent (an agent run: call, tool
work, next call). Each call's model time at a tier comes from that tier's profile: its TTFT (with
the prompt's prefill, where the profile has a prefill rate) plus the call's output tokens
(reasoning included) over its rate. The client's own time (tools, I/O,
the agent thinking between calls) is what the recording shows between the end of one reply and
the next request, and no tier shortens it: this is why an end-to-end speed-up is smaller than the
raw one (GDP-Val: 5.6x end to end against 14x on tokens). The session is taken as sequential;
calls that overlapped count no client time between them. Cost is at the fixture's prices, as
the usage ledger bills.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from mockserver.cassettes.figures import Figures, figures
from mockserver.cassettes.format import Record
from mockserver.config.fixture import Fixture, Tier
from mockserver.service.exchange import Usage
from mockserver.service.ledger import cost_usd
from mockserver.service.prefill import prefill_seconds

INFERENCE_APIS = ("chat.completions", "responses", "messages")
STANDARD: Tier = "default"


@dataclass(frozen=True)
class Call:
    record: Record
    figures: Figures
    client_s: float  # the client's own time before this call: since the previous reply ended

    @property
    def model(self) -> str:
        return self.figures.model or "unknown"


@dataclass(frozen=True)
class TierFigures:
    tier: str  # a fixture tier, or "recorded"
    end_to_end_s: float
    model_s: float
    client_s: float
    speedup_vs_recorded: float | None  # None when the cassette holds no timing (VCR)
    speedup_vs_standard: float | None
    cost_usd: float
    measured: bool = False  # driven against a running server (--drive) rather than computed

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def session(records: Sequence[Record]) -> list[Call]:
    """The successful inference calls, in the order they were sent, each with the client time before it."""
    shown = [(figures(r), r) for r in records if r.api in INFERENCE_APIS and r.response.status < 400]
    shown.sort(key=lambda pair: pair[0].started_at)
    calls: list[Call] = []
    previous_end: float | None = None
    for f, record in shown:
        gap = 0.0 if previous_end is None else max(0.0, f.started_at - previous_end)
        calls.append(Call(record, f, gap))
        previous_end = f.ended_at if previous_end is None else max(previous_end, f.ended_at)
    return calls


def model_seconds(fixture: Fixture, call: Call, tier: Tier) -> float:
    spec = fixture.model(call.model)
    profile = fixture.profile(spec, tier) if spec is not None else fixture.profiles[tier]
    prompt = prefill_seconds(profile, call.figures.input_tokens or 0)  # reading the prompt, where the tier has a rate
    return profile.ttft_ms / 1000 + prompt + (call.figures.output_tokens or 0) / profile.tokens_per_second


def compute(fixture: Fixture, calls: Sequence[Call], tiers: Sequence[Tier], *, timed: bool = True) -> list[TierFigures]:
    """The recorded run, then each tier's figures. A cassette that holds no timing (``timed=False``, VCR)
    has no recorded run and no client time: each tier's figures are its model time alone."""
    if not calls:
        return []
    if not timed:
        standard_model = sum(model_seconds(fixture, c, STANDARD) for c in calls)
        return [_untimed(fixture, calls, tier, standard_model) for tier in tiers]
    client = sum(c.client_s for c in calls)
    first, last = calls[0].figures, max(c.figures.ended_at for c in calls)
    recorded_e2e = last - first.started_at
    recorded_model = max(0.0, recorded_e2e - client)
    standard = client + sum(model_seconds(fixture, c, STANDARD) for c in calls)
    rows = [
        TierFigures(
            "recorded",
            recorded_e2e,
            recorded_model,
            client,
            1.0,
            standard / recorded_e2e if recorded_e2e else None,
            _cost(fixture, calls, None),
        )
    ]
    for tier in tiers:
        model = sum(model_seconds(fixture, c, tier) for c in calls)
        e2e = model + client
        rows.append(
            TierFigures(tier, e2e, model, client, recorded_e2e / e2e, standard / e2e, _cost(fixture, calls, tier))
        )
    return rows


def _untimed(fixture: Fixture, calls: Sequence[Call], tier: Tier, standard: float) -> TierFigures:
    model = sum(model_seconds(fixture, c, tier) for c in calls)
    return TierFigures(tier, model, model, 0.0, None, standard / model if model else None, _cost(fixture, calls, tier))


UNTIMED_NOTE = (
    "No timing recorded (a VCR cassette): each tier's time is its model time, from the recorded token counts "
    "and the tier's TTFT and rate, and the cost is at the fixture's prices. Not known: how long the recorded "
    "run took, and the client's own time between calls (taken as none), so there is no speed-up over the "
    "recorded run and end to end equals model time."
)


def _cost(fixture: Fixture, calls: Sequence[Call], tier: str | None) -> float:
    total = 0.0
    for call in calls:
        f = call.figures
        usage = Usage(f.input_tokens or 0, f.output_tokens or 0, f.reasoning_tokens)
        total += cost_usd(fixture, call.model, tier or f.tier, usage)
    return total


def render(rows: Sequence[TierFigures], calls: int) -> str:
    header = ("tier", "end to end s", "model s", "client s", "vs recorded", "vs standard", "cost USD", "")
    table = [header]
    for row in rows:
        table.append(
            (
                row.tier,
                f"{row.end_to_end_s:.2f}",
                f"{row.model_s:.2f}",
                f"{row.client_s:.2f}",
                "-" if row.speedup_vs_recorded is None else f"{row.speedup_vs_recorded:.2f}x",
                "-" if row.speedup_vs_standard is None else f"{row.speedup_vs_standard:.2f}x",
                f"{row.cost_usd:.4f}" if row.cost_usd >= 0.01 or not row.cost_usd else f"{row.cost_usd:.6f}",
                "measured" if row.measured else ("" if row.tier == "recorded" else "computed"),
            )
        )
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    lines = [
        "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip()
        for r in table
    ]
    return f"{calls} calls\n" + "\n".join(lines)
