"""Fidelity against real recorded traffic: ``mockserver conformance`` on a corpus of recorded pairs.

Starts the generators as the command does (in this process: the built-in fixture at time scale 0,
and the same with the ``claude-opus-4.8-fast`` preset for the Messages requests), sends every
recorded request (of a corpus file, or of VCR cassettes), and writes the figures per endpoint and
mode to ``benchmarks/results/fidelity.json`` and the command's full table to
``benchmarks/results/fidelity_table.txt`` (``--output`` and ``--table`` for other names). With
``--drive``, it also runs the corpus' own driver (``drive.py``, beside the corpus) on the same pairs
against the same generators, and records its figures beside ours, with every figure that differs
(there should be none). Each runs on generators of its own, started fresh, since what a generator
has seen (its prompt cache) shows in its replies.

    python -m benchmarks fidelity ../shared/realtraffic/corpus.jsonl [--drive ../shared/realtraffic/drive.py]
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.harness import RESULTS, arguments, results_path, write_results
from mockserver.commands.conformance import CLAUDE_PRESET, generator
from mockserver.recording.conformance import pairs as recorded
from mockserver.recording.conformance import report
from mockserver.recording.conformance.measure import Measurement, measure
from mockserver.recording.conformance.send import EMBEDDINGS_MODEL, Sender, Target

TABLE = RESULTS / "fidelity_table.txt"
DRIVE_TIMEOUT_S = 900
DRIVE_ROW = re.compile(
    r"^(?P<mode>\w+ (?:plain|stream))\s+(?P<pairs>\d+)\s+(?P<answered>\d+)\s+(?P<refused>\d+)\s+\S+%\s+\S+%\s+"
    r"(?P<never>\d+)\s+(?P<events>\d+)\s+\S+\s+(?P<forced>\S+)\s+(?P<schema>\S+)$"
)


def figures(m: Measurement) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for g in m.ordered():
        ok, checked = g.schema_ok()
        out[g.mode] = {
            "label": g.label,
            "pairs": g.pairs,
            "answered": g.answered,
            "refused": len(g.refused),
            "coverage_pct": round(g.coverage(), 1),
            "union_coverage_pct": round(g.union_coverage(), 1),
            "missing_paths": len(g.never()),
            "missing_event_types": len(g.missing_event_types()),
            "forced": g.forced,
            "forced_not_made": len(g.forced_ignored),
            "tool_args_invalid": len(g.tool_args_invalid),
            "schema_ok": ok,
            "schema_checked": checked,
        }
    return out


def corpus_line(pair: recorded.Pair) -> dict[str, Any]:
    """A pair as a line of a corpus file, for the driver."""
    where, _, index = pair.source.rpartition("#")
    repo, _, path = where.rpartition(":") if pair.repo else ("", "", where)
    return {"id": pair.source, "repo": repo, "commit": "", "path": path, "interaction": index,
            "endpoint": pair.endpoint, "stream": pair.stream, "request": pair.request, "response": pair.response,
            "events": [{"event": e.name, "data": e.data} for e in pair.events], "done": pair.done,
            "query": pair.query, "anthropic_version": pair.anthropic_version}  # fmt: skip


def drive_figures(drive: Path, pairs: list[recorded.Pair], openai: str, anthropic: str) -> dict[str, Any]:
    """The corpus driver's own figures per mode on the same pairs, from its JSON report and its table."""
    with tempfile.TemporaryDirectory() as scratch:
        report_path = Path(scratch) / "drive.json"
        corpus = Path(scratch) / "corpus.jsonl"
        corpus.write_text("".join(json.dumps(corpus_line(p)) + "\n" for p in pairs), encoding="utf-8")
        done = subprocess.run(
            [sys.executable, str(drive), "--openai", openai, "--anthropic", anthropic, "--corpus", str(corpus),
             "--report", str(report_path), "--budget", str(DRIVE_TIMEOUT_S)],
            capture_output=True, text=True, timeout=DRIVE_TIMEOUT_S, check=False,
        )  # fmt: skip
        groups = json.loads(report_path.read_text(encoding="utf-8"))["groups"]
    out: dict[str, Any] = {}
    for line in done.stdout.splitlines():
        row = DRIVE_ROW.match(line)
        if not row:
            continue
        g = groups[row["mode"]]
        forced = row["forced"].split("/") if row["forced"] != "-" else ["0", "0"]
        schema = row["schema"].split("/") if row["schema"] != "-" else ["0", "0"]
        out[row["mode"]] = {
            "pairs": g["pairs"],
            "answered": g["answered"],
            "refused": len(g["refused"]),
            "coverage_pct": round(g["coverage"], 1),
            "union_coverage_pct": round(g["union_coverage"], 1),
            "missing_paths": len(g["never_produced"]),
            "missing_event_types": len(g["missing_event_types"]),
            "forced": int(forced[1]),
            "forced_not_made": int(forced[0]),
            "tool_args_invalid": len(g["tool_args_invalid"]),
            "schema_ok": int(schema[0]),
            "schema_checked": int(schema[1]),
        }
    return out


def differing(ours: dict[str, Any], theirs: dict[str, Any]) -> list[str]:
    out = [f"{mode}: only in one" for mode in sorted(set(ours) ^ set(theirs))]
    for mode in sorted(set(ours) & set(theirs)):
        here = ours[mode]
        out += [f"{mode} {k}: {here[k]} here, {v} by drive.py" for k, v in theirs[mode].items() if here[k] != v]
    return out


def main() -> int:
    parser = arguments("fidelity", __doc__)
    parser.add_argument("paths", nargs="+", help="a corpus file (*.jsonl) of recorded pairs, or VCR cassettes")
    parser.add_argument("--drive", type=Path, help="the corpus' drive.py, run against the same generators")
    parser.add_argument("--table", type=Path, default=TABLE)
    args = parser.parse_args()
    output = results_path("fidelity", args)
    loaded = recorded.load(args.paths)
    pairs = loaded.pairs
    with contextlib.ExitStack() as stack:
        openai = stack.enter_context(generator(()))
        anthropic = stack.enter_context(generator((CLAUDE_PRESET,)))
        sender = stack.enter_context(Sender(Target(openai, anthropic)))
        models = {"openai": sender.target.openai_model, "embeddings": EMBEDDINGS_MODEL, "anthropic": sender.claude}
        result = measure(pairs, sender.send, skipped=loaded.skipped, repositories=recorded.repositories(pairs),
                         models=models)  # fmt: skip
    theirs = None
    if args.drive:  # on generators of its own: a prompt cache warmed by the first run would change the replies
        with generator(()) as openai, generator((CLAUDE_PRESET,)) as anthropic:
            theirs = drive_figures(args.drive, pairs, openai, anthropic)
    ours = figures(result)
    table = report.render(result)
    write_results(args.table, table)
    print(table)
    document: dict[str, Any] = {
        "command": "python -m benchmarks fidelity "
        + " ".join(args.paths)
        + (f" --drive {args.drive}" if args.drive else "")
        + (f" --output {output} --table {args.table}" if args.output is not None else ""),
        "pairs": result.pairs,
        "skipped": len(result.skipped),
        "repositories": result.repositories,
        "models": models,
        "overall_coverage_pct": round(result.coverage(), 1),
        "refused": result.refused(),
        "missing_paths": result.never_total(),
        "missing_event_types": len(result.missing_event_types()),
        "modes": ours,
    }
    if theirs is not None:
        document["drive"] = {"modes": theirs, "differences": differing(ours, theirs)}
        differences = document["drive"]["differences"]
        print(f"\ndrive.py on the same pairs, on generators of its own: {len(differences)} figures differ")
        for line in differences:
            print(f"  {line}")
    write_results(output, document)
    return 1 if theirs is not None and document["drive"]["differences"] else 0


if __name__ == "__main__":
    sys.exit(main())
