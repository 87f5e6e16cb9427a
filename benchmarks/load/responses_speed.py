"""Reproduce the announcement's speed check on the Responses API, at real speed (time scale 1).

    python -m benchmarks responses_speed [--output FILE]

The server runs in a separate process (``mockserver serve``) on a free port; the
client is plain httpx, not the SDK, whose per-event CPU cost is about ten times the
server's and would show in the figures (see docs/benchmarks.md). It measures, all in one run:

1. ``usage.output_tokens / wall time`` for ``gpt-5.6-sol-ultrafast`` and for
   ``gpt-5.6-sol`` on the default tier, streamed and not: once with the tiers'
   own TTFT (what a customer measures) and once with ``x-mock-ttft-ms: 0`` (the
   token rate alone). Each figure is set against its target in the same run.
2. Time to the first visible text delta on Ultrafast for reasoning efforts low,
   medium and high: the wait beyond the TTFT grows with the reasoning tokens,
   each produced at the tier's rate.

The whole run takes about 30 s.
"""

from __future__ import annotations

import json
import os
import platform
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from benchmarks.harness import arguments, results_path, write_results

KEY = "sk-mock-preview"
STANDARD = {"model": "gpt-5.6-sol", "rate": 54.0, "ttft_s": 3.0, "tokens": 216}
ULTRAFAST = {"model": "gpt-5.6-sol-ultrafast", "rate": 750.0, "ttft_s": 0.2, "tokens": 1500}
EFFORTS = {"low": 64, "medium": 256, "high": 1024}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "MOCKSERVER_TIME_SCALE": "1", "MOCKSERVER_LOG_LEVEL": "warning"}
    command = [sys.executable, "-m", "mockserver", "serve", "--port", str(port)]
    process = subprocess.Popen(command, env=env)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=0.5).status_code == 200:
                return process
        except httpx.HTTPError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("the server did not start")


def create(client: httpx.Client, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    """One non-streaming request: its usage and wall time."""
    started = time.perf_counter()
    reply = client.post("/v1/responses", json=body, headers=headers)
    wall = time.perf_counter() - started
    reply.raise_for_status()
    return {"wall_s": wall, "output_tokens": reply.json()["usage"]["output_tokens"]}


def stream(client: httpx.Client, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    """One streamed request: usage, wall time, and when the first text delta arrived."""
    started = time.perf_counter()
    first_text: float | None = None
    usage: dict[str, Any] = {}
    with client.stream("POST", "/v1/responses", json={**body, "stream": True}, headers=headers) as reply:
        reply.raise_for_status()
        for line in reply.iter_lines():
            if not line.startswith("data: "):
                continue
            if first_text is None and '"response.output_text.delta"' in line[:60]:
                first_text = time.perf_counter() - started
            elif line.startswith('data: {"type":"response.completed"'):
                usage = json.loads(line[6:])["response"]["usage"]
    wall = time.perf_counter() - started
    return {"wall_s": wall, "output_tokens": usage["output_tokens"], "first_text_s": first_text}


def throughput(client: httpx.Client, tier: dict[str, Any], *, own_ttft: bool, streamed: bool) -> dict[str, Any]:
    headers = {"x-mock-output-tokens": str(tier["tokens"])}
    if not own_ttft:
        headers["x-mock-ttft-ms"] = "0"
    body = {"model": tier["model"], "input": "Write a long article about speed."}
    run = (stream if streamed else create)(client, body, headers)
    ttft = tier["ttft_s"] if own_ttft else 0.0
    target = run["output_tokens"] / (ttft + run["output_tokens"] / tier["rate"])
    achieved = run["output_tokens"] / run["wall_s"]
    return {
        **run,
        "tokens_per_s": round(achieved, 1),
        "target_tokens_per_s": round(target, 1),
        "achieved_over_target": round(achieved / target, 4),
    }


def reasoning_delay(client: httpx.Client, effort: str) -> dict[str, Any]:
    body = {"model": ULTRAFAST["model"], "input": "Solve it.", "reasoning": {"effort": effort}}
    run = stream(client, body, {"x-mock-output-tokens": "16"})
    reasoning_tokens = EFFORTS[effort]
    wait = run["first_text_s"] - ULTRAFAST["ttft_s"]
    expected = reasoning_tokens / ULTRAFAST["rate"]
    return {
        "reasoning_tokens": reasoning_tokens,
        "first_text_s": round(run["first_text_s"], 4),
        "reasoning_wait_s": round(wait, 4),
        "expected_wait_s": round(expected, 4),
        "wait_over_expected": round(wait / expected, 4),
        "wait_per_reasoning_token_ms": round(1000 * wait / reasoning_tokens, 4),
    }


def main() -> None:
    parser = arguments("responses_speed", __doc__, output=False)
    parser.add_argument(
        "--output",
        "--out",
        type=Path,
        help="where to write the figures (default benchmarks/results/responses_speed.json)",
    )
    args = parser.parse_args()
    port = free_port()
    server = start_server(port)
    began = time.perf_counter()
    try:
        with httpx.Client(
            base_url=f"http://127.0.0.1:{port}", headers={"authorization": f"Bearer {KEY}"}, timeout=60
        ) as client:
            create(client, {"model": ULTRAFAST["model"], "input": "warm up"}, {"x-mock-ttft-ms": "0"})
            speed: dict[str, Any] = {}
            for name, tier in (("ultrafast", ULTRAFAST), ("standard", STANDARD)):
                for mode in ("stream", "non_stream"):
                    for ttft_label, own in (("with_ttft", True), ("rate_only", False)):
                        key = f"{name}.{mode}.{ttft_label}"
                        speed[key] = throughput(client, tier, own_ttft=own, streamed=mode == "stream")
                        print(
                            f"{key:36} {speed[key]['tokens_per_s']:8.1f} tok/s  (x{speed[key]['achieved_over_target']})"
                        )
            ratios = {
                f"{mode}.{label}": round(
                    speed[f"ultrafast.{mode}.{label}"]["tokens_per_s"]
                    / speed[f"standard.{mode}.{label}"]["tokens_per_s"],
                    2,
                )
                for mode in ("stream", "non_stream")
                for label in ("with_ttft", "rate_only")
            }
            efforts = {effort: reasoning_delay(client, effort) for effort in EFFORTS}
            for effort, row in efforts.items():
                first, ratio = row["first_text_s"], row["wait_over_expected"]
                print(f"ultrafast reasoning {effort:6} first text after {first:.3f} s (x{ratio})")
    finally:
        server.terminate()
        server.wait(timeout=10)
    results = {
        "what": "usage.output_tokens / wall time on the Responses API at time scale 1, raw httpx client",
        "machine": {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()},
        "targets": {"standard_tokens_per_s": STANDARD["rate"], "ultrafast_tokens_per_s": ULTRAFAST["rate"]},
        "throughput": speed,
        "ultrafast_over_standard": ratios,
        "target_ultrafast_over_standard_rate": round(ULTRAFAST["rate"] / STANDARD["rate"], 2),
        "reasoning_first_text_on_ultrafast": efforts,
        "run_seconds": round(time.perf_counter() - began, 1),
    }
    print(f"wrote {write_results(results_path('responses_speed', args), results, stamp=False)}")


if __name__ == "__main__":
    main()
