"""``mockserver whatif`` and ``mockserver calibrate``: what a recorded session says."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from mockserver.config.fixture import load_fixture
from mockserver.recording import calibrate as calibration

USAGE_ERROR = 2
DEFAULT_TIERS = ("default", "priority", "ultrafast")
TIERS = ("default", "priority", "flex", "ultrafast")


def add_whatif(commands: Any) -> None:
    whatif = commands.add_parser(
        "whatif",
        help="a recorded session's end-to-end time and cost at other tiers",
        description=(
            "Read a recorded session (a series of calls with the client's own time between them) and report, per "
            "tier, its end-to-end time, model time and client time, the speed-up over the recorded run and over "
            "standard, and its cost. The figures come from the tier profiles: TTFT plus tokens over rate."
        ),
    )
    whatif.add_argument(
        "path", metavar="PATH", help="the cassette of the session (native, or VCR: then no recorded timing is known)"
    )
    whatif.add_argument(
        "--tier",
        action="append",
        choices=TIERS,
        dest="tiers",
        help=f"a tier to compute; repeatable (default: {', '.join(DEFAULT_TIERS)})",
    )
    whatif.add_argument("--config", metavar="PATH", help="the fixture whose profiles and prices are used")
    whatif.add_argument("--preset", action="append", dest="presets", metavar="NAME", help="merge a timing preset")
    whatif.add_argument("--plot", metavar="FILE.png", help="draw model time against client time per tier")
    whatif.add_argument("--json", action="store_true", help="print the figures as JSON instead of a table")
    whatif.add_argument(
        "--drive",
        metavar="URL",
        help="also replay the session against a running server at each tier and measure it "
        "(serve it with --replay PATH --replay-timing tier)",
    )
    whatif.add_argument(
        "--time-scale",
        type=float,
        default=1.0,
        metavar="X",
        help="with --drive: the server's --time-scale; client time is scaled alike",
    )
    whatif.add_argument("--key", default="sk-mock-preview", help="with --drive: the key sent")


def add_calibrate(commands: Any) -> None:
    calibrate = commands.add_parser(
        "calibrate",
        help="measure a cassette's rates per model and tier, and write them as a fixture fragment",
        description=(
            "From a cassette's recorded streams, per model and tier: TTFT (p50, p90), tokens/s (median and "
            "spread) and tokens per event. Writes a fixture fragment (extends: default) so that `serve --config` "
            f"paces like the recorded service. A tier with fewer than {calibration.MIN_STREAMS} streams is "
            "reported, not written."
        ),
    )
    calibrate.add_argument("path", metavar="PATH", help="the cassette")
    calibrate.add_argument("--out", metavar="FIXTURE.yaml", help="write the fragment here (default: stdout)")
    calibrate.add_argument("--config", metavar="PATH", help="the fixture whose models a multi-model fragment lists")


def whatif(args: argparse.Namespace) -> int:
    # Here, not at the top: they bring an HTTP client, which no other command needs.
    from mockserver.cassettes import files, sources
    from mockserver.recording import whatif as what
    from mockserver.recording.drive import drive
    from mockserver.recording.plot import PlotUnavailable, draw

    try:
        loaded = sources.load([args.path])
    except files.CassetteError as exc:
        return _fail(str(exc))
    records = [r for c in loaded.cassettes for r in c.records]
    fixture = load_fixture(args.config, tuple(args.presets or ()))
    calls = what.session(records)
    if not calls:
        return _fail(f"{args.path}: no successful inference call to work from")
    tiers = tuple(args.tiers or DEFAULT_TIERS)
    rows = what.compute(fixture, calls, tiers, timed=loaded.timed)
    if args.drive:
        standard = next((r.end_to_end_s for r in rows if r.tier == "default"), None)
        recorded = rows[0].end_to_end_s if loaded.timed else None
        # A driven run is served the recorded tokens, so it costs what the computed row of its tier does.
        costs = {r.tier: r.cost_usd for r in rows}
        for tier in tiers:
            measured = drive(args.drive, calls, tier, key=args.key, time_scale=args.time_scale,
                             standard_s=standard, recorded_s=recorded)  # fmt: skip
            rows.append(replace(measured, cost_usd=costs[tier]))
    if args.plot:
        try:
            draw(rows, args.plot, f"{Path(args.path).name}: {len(calls)} calls, model time against client time")
        except PlotUnavailable as exc:
            return _fail(str(exc))
    if args.json:
        shown = {"session": args.path, "calls": len(calls), "timed": loaded.timed, "tiers": [r.as_dict() for r in rows]}
        print(json.dumps(shown, indent=2))
    else:
        print(what.render(rows, len(calls)))
        if not loaded.timed:
            print(what.UNTIMED_NOTE)
    return 0


def calibrate(args: argparse.Namespace) -> int:
    from mockserver.cassettes import files

    try:
        found = calibration.measure(files.load(args.path).records)
    except files.CassetteError as exc:
        return _fail(str(exc))
    print(calibration.report(found), file=sys.stderr)
    if not any(m.enough for m in found):
        return _fail(f"{args.path}: no model and tier has {calibration.MIN_STREAMS} recorded streams; nothing written")
    text = calibration.fragment(found, Path(args.path).name, load_fixture(args.config))
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"mockserver: wrote {args.out}; serve with it: mockserver serve --config {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _fail(message: str) -> int:
    print(f"mockserver: {message}", file=sys.stderr)
    return USAGE_ERROR
