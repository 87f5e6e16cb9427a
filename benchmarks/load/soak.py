"""Soak and storm: a mixed, partly hostile load for a set time, watching what the server holds.

The server runs in its own process (``mockserver serve``); this process is the load client, on
raw asyncio sockets (no SDK, no HTTP library). Each worker loops over a mix of requests:
whole and streamed Chat Completions, streams abandoned after their first bytes, non-streaming
Ultrafast requests abandoned before their reply, stored Responses read back, and hostile bodies
(nested too deep, too large, not JSON). Every ``--interval`` seconds it reads ``GET /_mock/stats``:
resident memory, open file descriptors, replies held, streams open, asyncio tasks, Ultrafast slots,
journal and stored-response counts.

When the load stops it waits for the server to settle and reports whether it came back: every
counter at zero, file descriptors where they started, and memory flat after warm-up (the bounds on
the journal and stored responses are reached during warm-up, so memory must stop growing).

    python -m benchmarks soak --seconds 300            # the long run; figures to results/soak.json
    python -m benchmarks soak --seconds 40 --workers 8 # about what tests/e2e/test_soak.py runs in CI
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import orjson

from benchmarks.harness import arguments, results_path, write_results

HOST = "127.0.0.1"
KEY = "sk-mock-preview"
SETTLE_TIMEOUT_S = 15.0
# Bounds small enough to be reached during warm-up, so memory after it must be flat.
SERVER_OPTIONS = [
    "--time-scale", "0.05",
    "--stored-responses", "300",
    "--journal-size", "500",
    "--max-body-bytes", "1000000",
]  # fmt: skip
CHAT = {"model": "gpt-5.6-mini", "messages": [{"role": "user", "content": "Tell me a story."}], "max_tokens": 60}
ULTRAFAST = {"model": "gpt-5.6-sol", "service_tier": "ultrafast", "messages": [{"role": "user", "content": "hi"}]}


@dataclass
class Tally:
    tried: int = 0
    by_status: dict[int, int] = field(default_factory=dict)
    abandoned_streams: int = 0
    abandoned_waits: int = 0
    errors: int = 0

    def count(self, status: int) -> None:
        self.by_status[status] = self.by_status.get(status, 0) + 1

    @property
    def server_errors(self) -> int:
        return sum(n for status, n in self.by_status.items() if status >= 500)


async def request(
    port: int,
    method: str,
    path: str,
    body: bytes = b"",
    headers: dict[str, str] | None = None,
    *,
    read: str = "all",
) -> int:
    """One HTTP/1.1 request on its own connection. ``read``: "all", "some" (then hang up), "none"."""
    reader, writer = await asyncio.open_connection(HOST, port)
    try:
        head = [f"{method} {path} HTTP/1.1", f"host: {HOST}:{port}", "connection: close"]
        head += [f"{k}: {v}" for k, v in {"content-length": str(len(body)), **(headers or {})}.items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        await writer.drain()
        if read == "none":
            await asyncio.sleep(0.2)  # the server has the request; leave before its reply
            return 0
        status = int((await reader.readline()).split()[1])
        if read == "some":
            await reader.read(200)
            return status
        while await reader.read(65536):
            pass
        return status
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


def _json(body: Any) -> bytes:
    return orjson.dumps(body)


async def worker(port: int, n: int, stop_at: float, tally: Tally) -> None:
    auth = {"authorization": f"Bearer {KEY}", "content-type": "application/json"}
    fast = {**auth, "x-mock-tokens-per-second": "2000"}
    slow = {**auth, "x-mock-tokens-per-second": "0.01"}
    deep = b'{"model": "gpt-5.6-mini", "messages": ' + b"[" * 300 + b"]" * 300 + b"}"
    actions = itertools.cycle(range(8))
    for _ in range(n):
        next(actions)  # workers start at different points of the mix
    while time.monotonic() < stop_at:
        action = next(actions)
        tally.tried += 1
        try:
            if action == 0:
                status = await request(port, "POST", "/v1/chat/completions", _json(CHAT), fast)
            elif action == 1:
                status = await request(port, "POST", "/v1/chat/completions", _json({**CHAT, "stream": True}), fast)
            elif action == 2:
                body = _json({**CHAT, "stream": True, "max_tokens": 2000})
                status = await request(port, "POST", "/v1/chat/completions", body, slow, read="some")
                tally.abandoned_streams += 1
            elif action == 3:
                status = await request(port, "POST", "/v1/chat/completions", _json(ULTRAFAST), slow, read="none")
                tally.abandoned_waits += 1
            elif action == 4:
                body = _json({"model": "gpt-5.6-mini", "input": "Remember this.", "max_output_tokens": 40})
                status = await request(port, "POST", "/v1/responses", body, fast)
            elif action == 5:
                status = await request(port, "POST", "/v1/chat/completions", deep, auth)
            elif action == 6:
                # Declares a body over --max-body-bytes: refused (413) before a byte of it is read.
                oversized = {**auth, "content-length": "1500000"}
                status = await request(port, "POST", "/v1/chat/completions", b"", oversized)
            else:
                body = _json({**ULTRAFAST, "stream": True})
                status = await request(port, "POST", "/v1/chat/completions", body, fast)
            if status:
                tally.count(status)
        except (OSError, ValueError, IndexError, asyncio.IncompleteReadError):
            tally.errors += 1


async def stats(port: int) -> dict[str, Any]:
    reader, writer = await asyncio.open_connection(HOST, port)
    try:
        writer.write(f"GET /_mock/stats HTTP/1.1\r\nhost: {HOST}:{port}\r\nconnection: close\r\n\r\n".encode())
        await writer.drain()
        raw = await reader.read()
    finally:
        writer.close()
    sample: dict[str, Any] = orjson.loads(raw.split(b"\r\n\r\n", 1)[1])
    return sample


async def drive(port: int, seconds: float, workers: int, interval: float) -> dict[str, Any]:
    tally = Tally()
    started = time.monotonic()
    stop_at = started + seconds
    for _ in range(150):  # the address is printed before uvicorn accepts; wait until it does
        with contextlib.suppress(OSError):
            first = await stats(port)
            break
        await asyncio.sleep(0.1)
    else:
        raise RuntimeError(f"the server on port {port} never answered")
    samples: list[dict[str, Any]] = [{"t": 0.0, **first}]
    load = [asyncio.create_task(worker(port, n, stop_at, tally)) for n in range(workers)]
    while time.monotonic() < stop_at:
        await asyncio.sleep(min(interval, max(0.0, stop_at - time.monotonic())))
        samples.append({"t": round(time.monotonic() - started, 1), **await stats(port)})
    await asyncio.gather(*load)
    settled = samples[-1]
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    while time.monotonic() < deadline:
        settled = {"t": round(time.monotonic() - started, 1), **await stats(port)}
        if not (settled["replies_held"] or settled["streams_open"] or settled["ultrafast_in_flight"]):
            break
        await asyncio.sleep(0.2)
    return {"tally": tally, "samples": samples, "settled": settled}


def run(seconds: float, workers: int = 8, interval: float = 2.0) -> dict[str, Any]:
    """Start a server, load it for ``seconds``, and return the figures (see :func:`verdict`)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "mockserver", "serve", "--port", "0", "--log-level", "warning", *SERVER_OPTIONS],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        port = _port_from_banner(process)
        result = asyncio.run(drive(port, seconds, workers, interval))
    finally:
        process.terminate()
        process.wait(timeout=20)
        if process.stderr is not None:
            process.stderr.close()
    tally: Tally = result["tally"]
    samples = result["samples"]
    warm = next((s for s in samples if s["t"] >= seconds / 3), samples[-1])
    settled = result["settled"]
    return {
        "seconds": seconds,
        "workers": workers,
        "requests_tried": tally.tried,
        "by_status": dict(sorted(tally.by_status.items())),
        "server_errors": tally.server_errors,
        "client_errors": tally.errors,
        "abandoned_streams": tally.abandoned_streams,
        "abandoned_non_streaming": tally.abandoned_waits,
        "rss_start_mb": round(samples[0]["rss_bytes"] / 2**20, 1),
        "rss_after_warmup_mb": round(warm["rss_bytes"] / 2**20, 1),
        "rss_end_mb": round(settled["rss_bytes"] / 2**20, 1),
        "rss_growth_after_warmup_mb": round((settled["rss_bytes"] - warm["rss_bytes"]) / 2**20, 1),
        "fds_start": samples[0]["open_fds"],
        "fds_end": settled["open_fds"],
        "tasks_start": samples[0]["tasks"],
        "settled": settled,
        "samples": samples,
    }


def _port_from_banner(process: subprocess.Popen[str]) -> int:
    """The port ``--port 0`` chose, from the start-up line ``... http://127.0.0.1:PORT/v1``."""
    assert process.stderr is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        if "http://" in line:
            return int(line.split("http://", 1)[1].split(":", 1)[1].split("/", 1)[0].split()[0])
    raise RuntimeError("the server did not report its address")


def verdict(report: dict[str, Any], max_growth_mb: float = 20.0) -> list[str]:
    """What did not come back: empty when the soak passed."""
    settled = report["settled"]
    problems = []
    if report["server_errors"]:
        problems.append(f"{report['server_errors']} replies were 5xx: {report['by_status']}")
    for counter in ("replies_held", "streams_open", "ultrafast_in_flight"):
        if settled[counter]:
            problems.append(f"{counter} is {settled[counter]} after the load stopped")
    if report["rss_growth_after_warmup_mb"] > max_growth_mb:
        problems.append(f"memory grew {report['rss_growth_after_warmup_mb']} MB after warm-up")
    if report["fds_end"] is not None and report["fds_end"] > report["fds_start"] + 5:
        problems.append(f"open file descriptors went from {report['fds_start']} to {report['fds_end']}")
    if settled["tasks"] > report["tasks_start"] + 5:
        problems.append(f"asyncio tasks went from {report['tasks_start']} to {settled['tasks']}")
    return problems


def main() -> int:
    parser = arguments("soak", __doc__)
    parser.add_argument("--seconds", type=float, default=300.0, help="how long the load runs")
    parser.add_argument("--workers", type=int, default=8, help="concurrent connections of the load")
    parser.add_argument("--interval", type=float, default=5.0, help="seconds between samples")
    args = parser.parse_args()
    report = run(args.seconds, args.workers, args.interval)
    problems = verdict(report)
    report["problems"] = problems
    write_results(results_path("soak", args), report, stamp=False)
    columns = ("t", 6), ("rss MB", 7), ("fds", 4), ("held", 4), ("streams", 7), ("tasks", 5), ("uf", 3)
    print(" ".join(f"{name:>{width}}" for name, width in (*columns, ("journal", 7), ("stored", 6))))
    for s in [*report["samples"], report["settled"]]:
        print(
            f"{s['t']:>6} {s['rss_bytes'] / 2**20:>7.1f} {s['open_fds']:>4} {s['replies_held']:>4} "
            f"{s['streams_open']:>7} {s['tasks']:>5} {s['ultrafast_in_flight']:>3} {s['journal_entries']:>7} "
            f"{s['stored_responses']:>6}"
        )
    summary = {k: v for k, v in report.items() if k not in ("samples", "settled")}
    print(json.dumps(summary, indent=2))
    print("PASS" if not problems else "FAIL: " + "; ".join(problems))
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
