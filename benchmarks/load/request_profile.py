"""Where a request's CPU goes before its stream opens: py-spy on a server taking bursts of requests.

The server (``mockserver serve`` with the sweep's benchmark fixture) takes six bursts of 250
eight-token streams sent together (the sweep's ``request_cost``), while ``py-spy record`` samples
it. Each sample is given to the innermost frame that belongs to a package (a ``mockserver``
subpackage, uvicorn, FastAPI, Starlette, ...); a stdlib or C frame goes to its nearest such caller,
so uvicorn's share includes the event loop and the sockets. Writes
``benchmarks/results/request_profile.json``: the share of each, and CPU per request.

    python -m benchmarks request_profile     # needs py-spy (pip install -e ".[benchmarks]") and ptrace
"""

from __future__ import annotations

import asyncio
import collections
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.harness import arguments, results_path, write_results
from benchmarks.load import sweep

BURSTS = 6
PACKAGES = ("fastapi", "starlette", "pydantic", "uvicorn", "httptools", "uvloop", "orjson", "tiktoken", "faker")


def owner(frame: str) -> str | None:
    """The package a py-spy frame (``function (path:line)``) belongs to, or None for stdlib and C."""
    match = re.search(r"\((.*?):\d+\)", frame)
    path = match.group(1) if match else frame
    for name in PACKAGES:  # py-spy shortens a site-packages path to "fastapi/routing.py"
        if path.startswith(f"{name}/") or f"/{name}/" in path:
            return name
    inner = re.search(r"mockserver/([a-z_]+)/([a-z_]+)/", path) or re.search(r"mockserver/([a-z_]+)", path)
    return "mockserver." + ".".join(inner.groups()) if inner else None


def shares(raw: Path) -> tuple[int, dict[str, float]]:
    counted: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw.read_text().splitlines():
        if not line.strip():
            continue
        stack, count = line.rsplit(" ", 1)
        total += int(count)
        who = next((o for o in map(owner, reversed(stack.split(";"))) if o), "other")
        counted[who] += int(count)
    return total, {who: round(100 * n / total, 1) for who, n in counted.most_common(20)}


def main() -> None:
    args = arguments("request_profile", __doc__).parse_args()
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        raw = directory / "profile.raw"
        command, env = sweep.server_commands(1, directory, None, None)["mockserver"]
        with sweep.started({"mockserver": (command, env)}) as servers:
            server = servers["mockserver"]
            asyncio.run(sweep.request_cost(server, 50))  # warm up
            spy_args = ["-d", "12", "-r", "500", "--format", "raw", "-o", str(raw), "--nonblocking"]
            spy = subprocess.Popen(
                ["py-spy", "record", "-p", str(server.process.pid), *spy_args],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            time.sleep(1.0)
            costs = [asyncio.run(sweep.request_cost(server, 250))["cpu_ms_per_request"] for _ in range(BURSTS)]
            spy.wait(60)
        samples, by_owner = shares(raw)
    result: dict[str, Any] = {
        "what": f"{BURSTS} bursts of 250 eight-token streams, py-spy at 500 Hz, share of samples by innermost package",
        "load_average_before": [round(x, 2) for x in load],
        "cpu_ms_per_request": sorted(costs)[len(costs) // 2],
        "samples": samples,
        "percent_of_samples": by_owner,
    }
    write_results(results_path("request_profile", args), result, stamp=False, show=True)


if __name__ == "__main__":
    main()
