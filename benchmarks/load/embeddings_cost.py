"""What an embeddings request costs the server, from a small one to the largest the limits allow,
and whether ``/health`` keeps answering while the largest is made.

Starts ``mockserver serve --time-scale 0`` (replies are not held, so the time is the work) and
sends, each ``--repeat`` times, the median reported:

- ``small``: 3 short texts to text-embedding-3-small (1,536 values each);
- ``batch``: 100 texts of about 60 words each to text-embedding-3-small;
- ``largest``: 2,048 token arrays of 146 distinct tokens each (299,008 tokens, under the 300,000 a
  request may hold: about the most work the limits allow) to
  text-embedding-3-large (3,072 values each), as ``base64`` and as ``float``;

and, while one ``largest`` request of each format runs, polls ``/health`` every 20 ms and reports the
slowest answer, beside the slowest answer of an idle server polled as long (the machine's own
noise). Also the server's resident memory after the largest requests (Linux ``/proc``).

The machine's load (``os.getloadavg``) is written beside the figures: they are wall times.

    python -m benchmarks embeddings_cost [--repeat 3] [--output FILE]

Writes ``benchmarks/results/embeddings_cost.json``.
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from benchmarks.harness import ROOT, arguments, results_path, write_results

HEADERS = {"authorization": "Bearer sk-mock-preview"}
WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = [sys.executable, "-m", "mockserver", "serve", "--port", str(port), "--time-scale", "0", "--quiet"]
    proc = subprocess.Popen([*args, "--log-level", "warning"], env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return proc
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("the server did not start")


def bodies() -> dict[str, dict[str, Any]]:
    batch = [" ".join(WORDS[(i + j) % len(WORDS)] + str(j % 17) for j in range(60)) for i in range(100)]
    # 146 distinct token ids per input, spread over the vocabulary (cl100k_base has 100,256).
    largest = [[1000 + (146 * i + k) % 99_000 for k in range(146)] for i in range(2048)]
    return {
        "small": {"model": "text-embedding-3-small", "input": ["a cat", "a dog", "quarterly revenue"]},
        "batch": {"model": "text-embedding-3-small", "input": batch, "encoding_format": "float"},
        "largest_base64": {"model": "text-embedding-3-large", "input": largest, "encoding_format": "base64"},
        "largest_float": {"model": "text-embedding-3-large", "input": largest, "encoding_format": "float"},
    }


def timed(client: httpx.Client, body: dict[str, Any]) -> tuple[float, int, int]:
    started = time.perf_counter()
    reply = client.post("/v1/embeddings", json=body)
    elapsed = time.perf_counter() - started
    reply.raise_for_status()
    return elapsed, reply.json()["usage"]["prompt_tokens"], len(reply.content)


def health_during(
    url: str, client: httpx.Client, body: dict[str, Any] | None, seconds: float = 0.0
) -> dict[str, float]:
    """The slowest /health answer while ``body`` is served (or, without one, for ``seconds`` of an
    idle server: the baseline of a machine under load), polling every 20 ms."""
    done = threading.Event()
    waits: list[float] = []

    def poll() -> None:
        with httpx.Client(base_url=url) as health:
            while not done.is_set():
                started = time.perf_counter()
                health.get("/health").raise_for_status()
                waits.append(time.perf_counter() - started)
                time.sleep(0.02)

    poller = threading.Thread(target=poll)
    poller.start()
    try:
        if body is None:
            time.sleep(seconds)
            elapsed = seconds
        else:
            elapsed, _, _ = timed(client, body)
    finally:
        done.set()
        poller.join()
    return {"request_s": round(elapsed, 3), "health_polls": len(waits), "health_max_ms": round(max(waits) * 1000, 1)}


def resident_mib(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


def main() -> None:
    parser = arguments("embeddings_cost", __doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = start_server(port)
    load_before = os.getloadavg()
    results: dict[str, Any] = {}
    try:
        with httpx.Client(base_url=url, headers=HEADERS, timeout=300) as client:
            timed(client, bodies()["small"])  # loads cl100k_base and the table: not part of any figure
            for name, body in bodies().items():
                runs = [timed(client, body) for _ in range(args.repeat)]
                results[name] = {
                    "inputs": len(body["input"]),
                    "prompt_tokens": runs[0][1],
                    "reply_mib": round(runs[0][2] / 2**20, 2),
                    "median_s": round(statistics.median(r[0] for r in runs), 3),
                    "runs_s": [round(r[0], 3) for r in runs],
                }
            for name in ("largest_base64", "largest_float"):
                results[f"health_during_{name}"] = health_during(url, client, bodies()[name])
            results["health_idle"] = health_during(url, client, None, results["largest_float"]["median_s"])
        results["server_rss_mib"] = resident_mib(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    report = {
        "machine": {"cpus": os.cpu_count(), "load_before": [round(x, 2) for x in load_before]},
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "repeat": args.repeat,
        "results": results,
    }
    write_results(results_path("embeddings_cost", args), report, stamp=False, show=True)


if __name__ == "__main__":
    main()
