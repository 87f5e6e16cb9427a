"""The conformance report: a table per endpoint and mode with the top differences and where each was
recorded, and the same figures with every pair's result as JSON."""

from __future__ import annotations

from collections import Counter, OrderedDict
from dataclasses import asdict
from typing import Any

from mockserver.recording.conformance.measure import Group, Measurement, PairResult, norm_error

TOP = 6  # differences listed per kind and mode
TOP_MISMATCHES = 3
TOP_CASES = 2
MESSAGE_CHARS = 200

HEADER = ("mode", "pairs", "refused", "coverage", "union", "missing paths", "missing events", "forced not made",
          "args invalid", "schema ok")  # fmt: skip
LEGEND = (
    "coverage: share of the recorded replies' paths (JSON path, [] for list items, <t> for an item's type; per event "
    "type for streams) that the generator's reply to the same request also has, pooled over the pairs answered; "
    "union: share of the distinct recorded paths produced at least once; missing paths: distinct recorded paths "
    "never produced; missing events: event types of the recorded streams never sent; forced not made: replies "
    "without a tool call although tool_choice forced one"
)


def row(g: Group) -> tuple[str, ...]:
    ok, checked = g.schema_ok()
    return (
        g.label,
        str(g.pairs),
        str(len(g.refused)),
        f"{g.coverage():.1f}%" if g.answered else "-",
        f"{g.union_coverage():.1f}%" if g.answered else "-",
        str(len(g.never())),
        str(len(g.missing_event_types())) if g.mode.endswith("stream") else "-",
        f"{len(g.forced_ignored)} of {g.forced}" if g.forced else "-",
        str(len(g.tool_args_invalid)),
        f"{ok}/{checked}" if checked else "-",
    )


def table(rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))
            for r in rows]  # fmt: skip


def details(g: Group) -> list[str]:
    """The top differences of one mode, each with where it was recorded."""
    lines = [
        "",
        f"== {g.label}: {g.pairs} pairs, {g.answered} answered, {len(g.refused)} refused; coverage {g.coverage():.1f}% "
        f"({g.covered}/{g.real} recorded paths), {g.union_coverage():.1f}% of the distinct ones",
    ]
    add = lines.append
    never = g.never()
    if never:
        add(f"   recorded paths never produced ({len(never)}; how many recorded replies had each):")
        lines += [f"     {n:4d}  {p}    e.g. {g.example.get(('real', p))}" for p, n in never[:TOP]]
        if len(never) > TOP:
            add(f"     ... {len(never) - TOP} more")
    for (path, real, mock), n in g.mismatch.most_common(TOP_MISMATCHES):
        add(f"   type differs x{n}: {path}: recorded {real}, generated {mock}    e.g. {g.example.get(('mm', path))}")
    events = g.missing_event_types()
    if events:
        add("   event types of the recorded streams never sent: "
            + "; ".join(f"{e} (x{n}, e.g. {g.example.get(('ev', e))})" for e, n in events))  # fmt: skip
    if g.mode.endswith("stream") and g.answered and g.mode != "chat stream":
        add(f"   same event sequence as recorded (runs collapsed): {g.same_sequence}/{g.answered}")
    if g.tool_real or g.tool_unasked:
        add(f"   tool calls: recorded in {g.tool_real} replies, also made by the generator in {g.tool_mock}; "
            f"made where none was recorded in {g.tool_unasked}")  # fmt: skip
    if g.forced_ignored:
        add(f"   tool_choice forced a tool call, answered without one: {len(g.forced_ignored)} of {g.forced}")
        lines += [f"     tool_choice {choice}: {source}" for source, choice in g.forced_ignored[:TOP_CASES]]
    for label, items in (
        ("more than one tool call although parallel tool calls were off", g.parallel_violations),
        ("finish or stop reason does not fit the reply", g.reason_mismatch),
        ("tool-call arguments that do not fit the tool's schema", g.tool_args_invalid),
        ("structured output that does not fit its schema", g.schema_fail),
    ):
        if items:
            add(f"   {label}: {len(items)}")
            lines += [f"     {source}: {why}" for source, why in items[:TOP_CASES]]
    if g.refused:
        add("   refused (the real API answered 200), by message:")
        by_message: OrderedDict[tuple[Any, str], list[tuple[str, str | None]]] = OrderedDict()
        for source, status, message in g.refused:
            by_message.setdefault((status, norm_error(message)), []).append((source, message))
        for (status, _), refusals in sorted(by_message.items(), key=lambda kv: -len(kv[1])):
            add(f"     {len(refusals):3d} x {status} {str(refusals[0][1])[:MESSAGE_CHARS]}")
            add(f"           e.g. {refusals[0][0]}")
    lines += [f"   note: {n}" for n in g.notes[:TOP_CASES]]
    return lines


def render(m: Measurement) -> str:
    groups = m.ordered()
    repos = f" from {', '.join(m.repositories)}" if m.repositories else ""
    models = ", ".join(f"{k} {v}" for k, v in m.models.items())
    lines = [f"conformance: {m.pairs} recorded pairs{repos}, sent to the generator in {m.elapsed_s:.1f} s ({models})"]
    if m.skipped:
        reasons = Counter(s.reason.rpartition(": ")[2] for s in m.skipped).most_common(TOP)
        lines.append(f"skipped: {len(m.skipped)} recorded interactions (--json lists each): "
                     + "; ".join(f"{n} x {why}" for why, n in reasons))  # fmt: skip
    lines += [LEGEND, "", *table([HEADER, *(row(g) for g in groups)])]
    for g in groups:
        lines += details(g)
    lines += ["", summary(m)]
    return "\n".join(lines)


def summary(m: Measurement) -> str:
    return (
        f"conformance: coverage {m.coverage():.1f}% of recorded paths, {m.refused()} refused of {m.pairs}, "
        f"{m.never_total()} missing paths, {len(m.missing_event_types())} missing event types, "
        f"{sum(len(g.forced_ignored) for g in m.groups.values())} forced tool calls not made"
    )


def pair_document(r: PairResult) -> dict[str, Any]:
    """One pair's result: its figures and differences (the full path sets are left out: they are the replies')."""
    out: dict[str, Any] = {"source": r.source, "mode": r.mode, "status": r.status}
    if r.comparison is None:
        out["error"] = r.error
        return out
    c = asdict(r.comparison)
    del c["real_path_set"], c["mock_paths"]
    c["real_events"], c["mock_events"] = sorted(c["real_events"]), sorted(c["mock_events"])
    c["coverage"] = round(r.comparison.coverage, 1)
    c["missing_events"] = r.comparison.missing_events
    return {**out, **c}


def group_document(g: Group) -> dict[str, Any]:
    ok, checked = g.schema_ok()
    return {
        "label": g.label,
        "pairs": g.pairs,
        "answered": g.answered,
        "refused": g.refused,
        "coverage": g.coverage(),
        "union_coverage": g.union_coverage(),
        "never_produced": g.never(),
        "mock_only": g.mock_only(),
        "missing_event_types": g.missing_event_types(),
        "same_sequence": g.same_sequence,
        "mismatch": [[p, real, mock, n] for (p, real, mock), n in g.mismatch.items()],
        "tool_calls": {"recorded": g.tool_real, "generated": g.tool_mock, "unasked": g.tool_unasked},
        "tool_miss": g.tool_miss,
        "forced": g.forced,
        "forced_ignored": g.forced_ignored,
        "tool_args_invalid": g.tool_args_invalid,
        "schema_ok": ok,
        "schema_checked": checked,
        "schema_fail": g.schema_fail,
        "examples": {"|".join(k): v for k, v in g.example.items()},
    }


def document(m: Measurement) -> dict[str, Any]:
    """Every figure and every pair's result, for ``--json``."""
    return {
        "overall_coverage": m.coverage(),
        "pairs": m.pairs,
        "refused": m.refused(),
        "never_produced": m.never_total(),
        "missing_event_types": m.missing_event_types(),
        "models": m.models,
        "repositories": m.repositories,
        "skipped": [asdict(s) for s in m.skipped],
        "groups": {g.mode: group_document(g) for g in m.ordered()},
        "per_pair": [pair_document(r) for r in m.results],
    }
