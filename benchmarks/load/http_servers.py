"""What the HTTP server alone costs of a request, before its stream opens: uvicorn against granian.

Issue 22's goal is a request path costing at most twice the raw floor's CPU before its stream opens.
This measures the same burst as ``python -m benchmarks sweep``'s ``open_cost`` (150 streams with a 10 s
TTFT, sent together; the server's CPU read once every reply's head has come; the median of 5
bursts) against six servers, each pinned to core 0 with the client on core 1:

- ``floor``: the raw floor (``servers/floor.py``: bare asyncio, no HTTP parsing);
- ``uvicorn``: a bare ASGI app under uvicorn with uvloop and httptools (``servers/uvicorn_floor.py``), as
  ``mockserver serve`` runs;
- ``minimum``: the same app under uvicorn doing the least an OpenAI-compatible endpoint must
  before a stream opens: check the path and the key, parse and validate the body, look the model
  up, send the live API's headers (``servers/minimum.py``);
- ``granian``: the same app under granian, whose HTTP layer is in Rust (``servers/granian_floor.py``);
- ``mockserver``: this checkout, on its built-in fixture (with the sweep's room for streams);
- ``mockserver_granian``: the same app served by granian (``servers/granian_mockserver.py``): what
  changing the HTTP server would buy mockserver itself.

The servers take turns, ``--rounds`` times, so each sees the same machine. Writes
``benchmarks/results/http_servers.json``.

    python -m benchmarks http_servers [--rounds 3]
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import uvloop

from benchmarks.harness import ROOT, SERVERS, arguments, command_line, results_path, write_results
from benchmarks.load.sweep import (
    OPEN_REQUESTS,
    add_request_ratio,
    bench_fixture,
    open_cost,
    server_commands,
    started,
    warm_up,
)


def main() -> None:
    parser = arguments("http_servers", __doc__)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if (os.cpu_count() or 1) > 1:
        os.sched_setaffinity(0, {1})
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        known = server_commands(1, Path(tmp), None, None)
        commands = {
            "floor": known["floor"],
            "uvicorn": known["uvicorn"],
            "minimum": ([sys.executable, str(SERVERS / "minimum.py"), "PORT"], {"PYTHONPATH": str(SERVERS)}),
            "granian": ([sys.executable, str(SERVERS / "granian_floor.py"), "PORT"], {"PYTHONPATH": str(SERVERS)}),
            "mockserver": known["mockserver"],
            "mockserver_granian": (
                [sys.executable, str(SERVERS / "granian_mockserver.py"), "PORT", str(bench_fixture(Path(tmp), 1))],
                {"PYTHONPATH": str(ROOT)},
            ),
        }
        runs: dict[str, list[float]] = {name: [] for name in commands}
        with started(commands) as servers:
            uvloop.run(warm_up(servers, 1))
            for _ in range(args.rounds):
                for name, server in servers.items():
                    runs[name].append(uvloop.run(open_cost(server, OPEN_REQUESTS))["cpu_ms_per_request"])
    costs: dict[str, dict[str, Any]] = {
        name: {"cpu_ms_per_request": statistics.median(values), "rounds": values} for name, values in runs.items()
    }
    add_request_ratio(costs)
    report = {
        "what": f"server CPU per request before its stream opens: {OPEN_REQUESTS} streams, 10 s TTFT, sent together",
        "command": command_line("http_servers"),
        "load_average_before": [round(x, 2) for x in load],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "servers": costs,
    }
    write_results(results_path("http_servers", args), report)
    for name, cost in costs.items():
        print(name, {k: (round(v, 3) if isinstance(v, float) else v) for k, v in cost.items()})


if __name__ == "__main__":
    main()
