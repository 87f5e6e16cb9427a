"""What a request costs mockserver before its head goes out, against a minimum server and the raw floor.

Three servers, each pinned to core 0 with the client on core 1, take turns in one run:

- ``floor``: the raw floor (``servers/floor.py``: bare asyncio, no HTTP parsing);
- ``minimum``: a bare ASGI app under uvicorn (uvloop, httptools) that does the least an
  OpenAI-compatible endpoint must before a stream opens: the path, the bearer key, the body parsed
  with orjson and validated strictly with its own model of the Chat request written from the API
  reference (``servers/chat_request.py``), the model looked up, the live API's headers
  (``servers/minimum.py``);
- ``mockserver``: this checkout, on its built-in fixture, as ``mockserver serve`` runs it.

Two measurements:

1. **CPU per request until every head is out**: 150 streaming requests sent together with a 10 s
   first token; the server's CPU is read once every reply's head has come (``sweep.open_cost``).
   ``--rounds`` bursts per server (7 by default), the servers taking turns; the median is reported
   with every round, and the ratios mockserver/minimum and minimum/floor.
2. **150 Ultrafast streams started together at TTFT 0** (750 tokens/s, 2 s of tokens each),
   ``--bursts`` times per server: the wait for the first token over the configured TTFT (p50 and
   p99), and every stream's achieved rate over 750 tokens/s, the fastest and the slowest stream
   (``sweep.run_cell``). With the wait's median in each tenth of the burst, in the order sent.
3. **The same burst at a slow rate** (``--slow-rate``, 30 tokens/s by default, 1 s of tokens): the
   streams already started then write next to nothing while the later requests are read, so the
   first-token wait is what the requests before cost alone. Set against the 750 tokens/s burst, it
   splits that wait in two: the requests' own CPU, and the events of the streams started before.

With ``--baseline DIR``, mockserver from another checkout (``baseline``) takes its turns in all three as
well: before and after, measured in one run.

Writes ``benchmarks/results/request_cost.json``.

    python -m benchmarks request_cost [--rounds 7] [--bursts 2] [--slow-rate 30] [--baseline DIR]
"""

from __future__ import annotations

import os
import statistics
import tempfile
from pathlib import Path
from typing import Any

import uvloop

from benchmarks.harness import arguments, command_line, results_path, write_results
from benchmarks.load.sweep import OPEN_REQUESTS, ULTRAFAST, open_cost, run_cell, server_commands, started, warm_up

SERVERS = ("floor", "minimum", "mockserver")
TTFT0_STREAMS = 150
TTFT0_SECONDS = 2.0
SLOW_SECONDS = 1.0


def main() -> None:
    parser = arguments("request_cost", __doc__, baseline="also measure mockserver from this checkout")
    parser.add_argument("--rounds", type=int, default=7, help="bursts of 150 requests per server, in turns")
    parser.add_argument("--bursts", type=int, default=2, help="bursts of 150 Ultrafast streams at TTFT 0")
    parser.add_argument("--slow-rate", type=float, default=30.0, help="tokens/s of the slow TTFT-0 bursts")
    args = parser.parse_args()
    if (os.cpu_count() or 1) > 1:
        os.sched_setaffinity(0, {1})
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        known = server_commands(1, Path(tmp), None, args.baseline, minimum=True)
        names = (*SERVERS, "baseline") if args.baseline is not None else SERVERS
        commands = {name: known[name] for name in names}
        cpu: dict[str, list[float]] = {name: [] for name in names}
        ttft0: dict[str, list[dict[str, Any]]] = {name: [] for name in names if name != "floor"}
        slow: dict[str, list[dict[str, Any]]] = {name: [] for name in names if name != "floor"}
        with started(commands) as servers:
            uvloop.run(warm_up(servers, 1))
            for _ in range(args.rounds):
                for name, server in servers.items():
                    cpu[name].append(uvloop.run(open_cost(server, OPEN_REQUESTS))["cpu_ms_per_request"])
            for _ in range(args.bursts):
                for name in ttft0:
                    cell = run_cell(servers[name], ULTRAFAST, 1, TTFT0_STREAMS, TTFT0_SECONDS, ttft_ms=0)
                    ttft0[name].append(uvloop.run(cell))
                for name in slow:
                    cell = run_cell(servers[name], args.slow_rate, 1, TTFT0_STREAMS, SLOW_SECONDS, ttft_ms=0)
                    slow[name].append(uvloop.run(cell))
    report = {
        "what": (
            f"server CPU per request until every head is out ({OPEN_REQUESTS} streams, 10 s TTFT, sent together), "
            f"and {TTFT0_STREAMS} Ultrafast streams started together at TTFT 0"
        ),
        "command": command_line("request_cost"),
        "load_average_before": [round(x, 2) for x in load],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "cpu_ms_per_request": {
            name: {"median": statistics.median(values), "rounds": values} for name, values in cpu.items()
        },
        "ttft0": {name: [_burst(cell) for cell in cells] for name, cells in ttft0.items()},
        "ttft0_slow": {
            "tokens_per_second": args.slow_rate,
            "bursts": {name: [_burst(cell) for cell in cells] for name, cells in slow.items()},
        },
    }
    median = {name: row["median"] for name, row in report["cpu_ms_per_request"].items()}
    report["mockserver_over_minimum"] = median["mockserver"] / median["minimum"]
    report["minimum_over_floor"] = median["minimum"] / median["floor"]
    if "baseline" in median:
        report["mockserver_over_baseline"] = median["mockserver"] / median["baseline"]
        report["baseline_over_minimum"] = median["baseline"] / median["minimum"]
    report["goals"] = _goals(report)
    write_results(results_path("request_cost", args), report)
    print({k: v for k, v in report.items() if k not in {"ttft0", "cpu_ms_per_request"}})
    for name, bursts in report["ttft0"].items():
        print(name, bursts)
    for name, bursts in report["ttft0_slow"]["bursts"].items():
        print(name, f"at {args.slow_rate:g} tokens/s", bursts)


def _burst(cell: dict[str, Any]) -> dict[str, Any]:
    keys = ("streams", "failed", "ttft_overhead_ms_p50", "ttft_overhead_ms_p99", "rate_ratio_min", "rate_ratio_max")
    row = {key: cell.get(key) for key in keys}
    row["ttft_overhead_ms_by_tenth"] = cell.get("ttft_overhead_ms_by_tenth")
    return row


def _goals(report: dict[str, Any]) -> dict[str, Any]:
    """The issue's goals, read off this run: CPU at most 2x the minimum's; TTFT p99 at most 1.5x the
    minimum's + 10 ms in each burst; every stream within 1% of 750 tokens/s."""
    pairs = zip(report["ttft0"]["mockserver"], report["ttft0"]["minimum"], strict=True)
    ttft_ok = all(ours["ttft_overhead_ms_p99"] <= 1.5 * theirs["ttft_overhead_ms_p99"] + 10 for ours, theirs in pairs)
    rates = [b for b in report["ttft0"]["mockserver"]]
    rate_ok = all(abs(b["rate_ratio_min"] - 1) <= 0.01 and abs(b["rate_ratio_max"] - 1) <= 0.01 for b in rates)
    return {
        "cpu_at_most_2x_minimum": report["mockserver_over_minimum"] <= 2.0,
        "ttft_p99_within_1_5x_minimum_plus_10ms": ttft_ok,
        "every_stream_within_1pct_of_750": rate_ok,
    }


if __name__ == "__main__":
    main()
