"""Where a request's CPU goes in a real server, step by step: the bursts of ``request_cost``, counted.

``request_cost`` gives the server's CPU per request until every head of a burst is out, and the
wait for the first tokens; this tells where that CPU goes. mockserver runs under
``benchmarks/servers/phased_mockserver.py``, which counts the thread CPU time of each step of a
request (exchange opened, body read, admitted, prompt counted, planned, resources taken, reply made,
headers added, head made, held writes written, stream opened, client watched) and of the app's whole work on the
request until its stream is open. The plain server runs beside it, taking turns, to show what the
counting adds, and with ``--baseline DIR`` mockserver from another checkout (``baseline``), plain, takes
its turns too: before and after, measured in one run.

Two bursts of 150 streaming requests sent together (each server pinned to core 0, the client on
core 1), ``--bursts`` times each after one not counted:

- ``heads``: a 10 s first token, the server's CPU read once every head is out (``request_cost``'s first
  measurement);
- ``first_tokens``: TTFT 0 at 30 tokens/s, read once every head is out, by when every first token is
  out too (a stream's first token goes out as its stream opens): what a request costs to its first
  token.

For each step, the median over the bursts of its CPU per request, the least and the most, and its
share of the server's whole CPU per request; the rest (uvicorn, the event loop and the sockets, the
garbage collector) is the whole less the app's. Writes ``benchmarks/results/request_phases.json``.

    python -m benchmarks request_phases [--bursts 7] [--baseline DIR]
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import uvloop

from benchmarks.harness import ROOT, SERVERS, arguments, command_line, results_path, write_results
from benchmarks.load.sweep import OPEN_REQUESTS, ULTRAFAST, Server, bench_fixture, requests_for, started, warm_up
from benchmarks.load_client import open_streams

BURSTS = {"heads": (ULTRAFAST, 10_000.0), "first_tokens": (30.0, 0.0)}  # (tokens/s, TTFT ms)
TOKENS = 8
SIGNAL_WAIT_S = 0.05  # for the server to take a signal and write its counts


def main() -> None:
    parser = arguments("request_phases", __doc__, baseline="also measure mockserver from this checkout, plain")
    parser.add_argument("--bursts", type=int, default=7, help="bursts of 150 requests per server and kind")
    args = parser.parse_args()
    if (os.cpu_count() or 1) > 1:
        os.sched_setaffinity(0, {1})
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        counts = Path(tmp) / "counts.jsonl"
        counts.touch()
        fixture = str(bench_fixture(Path(tmp), 1))
        serve = ["serve", "--port", "PORT", "--log-level", "warning", "--config", fixture]
        ours = {"PYTHONPATH": str(ROOT)}
        commands = {
            "counted": ([sys.executable, str(SERVERS / "phased_mockserver.py"), str(counts), *serve], ours),
            "plain": ([sys.executable, "-m", "mockserver", *serve], ours),
        }
        if args.baseline is not None:
            theirs = [*serve[:-1], str(bench_fixture(Path(tmp), 1, args.baseline))]
            commands["baseline"] = ([sys.executable, "-m", "mockserver", *theirs], {"PYTHONPATH": str(args.baseline)})
        with started(commands) as servers:
            uvloop.run(warm_up(servers, 1))
            results = {kind: uvloop.run(_bursts(servers, counts, kind, args.bursts)) for kind in BURSTS}
    report = {
        "what": f"CPU per request of each step, {OPEN_REQUESTS} streaming requests sent together",
        "command": command_line("request_phases"),
        "load_average_before": [round(x, 2) for x in load],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        **results,
    }
    write_results(results_path("request_phases", args), report)
    for kind, result in results.items():
        print(kind, json.dumps({k: v for k, v in result.items() if k != "steps"}))
        for step, row in result["steps"].items():
            print(f"  {row['us_per_request']:7.1f} us  {row['percent_of_server']:5.1f} %  {step}")


async def _bursts(servers: dict[str, Server], counts: Path, kind: str, bursts: int) -> dict[str, Any]:
    rate, ttft_ms = BURSTS[kind]
    counted = servers["counted"]
    cpu: dict[str, list[float]] = {name: [] for name in servers}
    steps: list[dict[str, float]] = []
    others = [name for name in servers if name != "counted"]
    for burst in range(bursts + 1):
        # The plain servers take turns going first: the one right after the counted server pays a few
        # per cent more (measured with the same checkout as the baseline).
        for name in ["counted", *(others if burst % 2 else reversed(others))]:
            server = servers[name]
            if server is counted:
                os.kill(server.process.pid, signal.SIGUSR1)  # the counts start from zero
                await asyncio.sleep(SIGNAL_WAIT_S)
            batch = requests_for("mockserver", server.port, rate, TOKENS, 1, OPEN_REQUESTS, ttft_ms=ttft_ms)
            before = server.cpu_seconds()
            transports = await open_streams(server.port, batch)
            await asyncio.sleep(0.02)  # the last head was written before the server's request task returned
            spent = server.cpu_seconds() - before
            if server is counted:
                os.kill(server.process.pid, signal.SIGUSR1)
                await asyncio.sleep(SIGNAL_WAIT_S)
            for transport in transports:
                transport.close()
            await asyncio.sleep(0.5)  # the server lets the streams go before the next burst
            if not burst:
                continue  # the first burst after start-up costs more: not counted
            cpu[name].append(spent / OPEN_REQUESTS * 1e6)
            if server is counted:
                line = json.loads(counts.read_text().splitlines()[-1])
                steps.append({step: s / line["requests"] * 1e6 for step, s in line["seconds"].items()})
    whole = statistics.median(cpu["counted"])
    rows = {}
    medians = {step: statistics.median(b.get(step, 0.0) for b in steps) for burst in steps for step in burst}
    for step in sorted(medians, key=lambda step: -medians[step]):
        values = [b.get(step, 0.0) for b in steps]
        rows[step] = {
            "us_per_request": round(statistics.median(values), 1),
            "least": round(min(values), 1),
            "most": round(max(values), 1),
            "percent_of_server": round(100 * statistics.median(values) / whole, 1),
        }
    app = statistics.median(b.get("the app, to its stream opened and watched", 0.0) for b in steps)
    return {
        "tokens_per_second": rate,
        "ttft_ms": ttft_ms,
        "server_us_per_request": {name: round(statistics.median(rounds), 1) for name, rounds in cpu.items()},
        "server_us_per_request_rounds": {name: [round(x, 1) for x in rounds] for name, rounds in cpu.items()},
        "outside_the_app_us_per_request": round(whole - app, 1),
        "steps": rows,
    }


if __name__ == "__main__":
    main()
