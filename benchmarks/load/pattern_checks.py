"""``/health`` while replies wait for backtracking ``pattern`` checks: the event loop keeps answering.

    python -m benchmarks pattern_checks [--output PATH]

One in-process server (built-in fixture, time scale 0). Eight clients at once each send Structured
Outputs requests whose schema ``pattern`` needs Python's backtracking engine and backtracks past the
100 ms check budget (``^(?!(a+)+b)a{40}$`` with a distinct suffix each time, so no pattern is
remembered as too slow), for two seconds; a ninth probes ``GET /health`` every 20 ms and records each
answer's latency. The same run does it twice: with the checks waited for in the planning thread
(the server as shipped), and with them waited for on the event loop (what the server did before,
by running the planner inline), so the two figures share the machine's load.
Figures go to ``benchmarks/results/pattern_checks.json``; it takes about 10 seconds.
"""

from __future__ import annotations

import os
import statistics
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import httpx

from benchmarks.harness import arguments, results_path, write_results
from mockserver import MockServer
from mockserver.config import patterns

T = TypeVar("T")
SECONDS = 2.0
CLIENTS = 8
PROBE_EVERY_S = 0.02


def body(index: int) -> dict[str, Any]:
    pattern = f"^(?!(a+)+b{index})a{{40}}$"
    schema = {"type": "object", "properties": {"c": {"type": "string", "pattern": pattern}}, "required": ["c"]}
    return {
        "model": "gpt-5.6-mini",
        "messages": [{"role": "user", "content": "x"}],
        "response_format": {"type": "json_schema", "json_schema": {"name": "c", "schema": schema}},
    }


def measure(url: str) -> dict[str, float]:
    stop = time.monotonic() + SECONDS
    counter = iter(range(10**9))
    statuses: list[int] = []

    def client() -> None:
        with httpx.Client(headers={"authorization": "Bearer sk-mock-preview"}, timeout=60) as http:
            while time.monotonic() < stop:
                statuses.append(http.post(f"{url}/v1/chat/completions", json=body(next(counter))).status_code)

    threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
    for thread in threads:
        thread.start()
    latencies: list[float] = []
    with httpx.Client(timeout=60) as http:
        while time.monotonic() < stop:
            started = time.perf_counter()
            http.get(f"{url}/health").raise_for_status()
            latencies.append((time.perf_counter() - started) * 1000)
            time.sleep(PROBE_EVERY_S)
    for thread in threads:
        thread.join()
    latencies.sort()
    return {
        "health_probes": len(latencies),
        "health_ms_median": round(statistics.median(latencies), 2),
        "health_ms_p99": round(latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))], 2),
        "health_ms_max": round(latencies[-1], 2),
        "structured_requests": len(statuses),
        "refused_400": statuses.count(400),
    }


async def inline(work: Callable[[], T]) -> T:
    return work()  # the checks waited for on the event loop, as before


def main() -> None:
    parser = arguments("pattern_checks", __doc__)
    args = parser.parse_args()
    report: dict[str, Any] = {"clients": CLIENTS, "seconds": SECONDS, "budget_ms": patterns.CHECK_BUDGET_S * 1000}
    report["load_average_1m"] = os.getloadavg()[0]
    with MockServer(time_scale=0, seed=1, log_level="warning") as server:
        report["off_loop"] = measure(server.url)
        shipped = patterns.off_loop
        patterns.off_loop = inline  # type: ignore[assignment]
        try:
            report["on_loop"] = measure(server.url)
        finally:
            patterns.off_loop = shipped  # type: ignore[assignment]
    report["p99_ratio_on_to_off"] = round(report["on_loop"]["health_ms_p99"] / report["off_loop"]["health_ms_p99"], 1)
    write_results(results_path("pattern_checks", args), report)
    print(report)


if __name__ == "__main__":
    main()
