"""Large request bodies: how long one holds the server's event loop, as the streams it serves see it.

20 streams at 750 tokens/s (Ultrafast's rate, 4 s each) run while one client sends a body of many
one-line messages, on each API: Chat Completions, the Responses API and the Messages API. Two sizes:

- 15,000 messages (0.8 MiB, about 180,000 tokens): it fits the model's window and is served;
- 150,000 messages (7.7 MiB): it passes every model's window and is refused with the live 400, after
  the server has read it;
- 600,000 messages (31 MiB, just under the default 32 MiB body limit): refused the same way; the
  paced streams last 12 s there, as reading it takes several seconds of the server's CPU.

The figures: the paced streams' worst gap between two reads, and their p99, beside each body, against
the same streams with no body (``alone``); and the floor, which no server can cut: how long orjson
takes to parse that body, in this process (the server parses it with the same call, in one piece).

The server (``mockserver serve --preset openai --preset claude-opus-4.8-fast``) runs in its own
process pinned to core 0, this client on core 1. ``--baseline DIR`` measures another checkout the
same way, after this one.

    python -m benchmarks big_bodies [--baseline DIR]     # writes benchmarks/results/big_bodies.json
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson

from benchmarks.harness import ROOT, arguments, command_line, free_port, results_path, wait_for_port, write_results
from benchmarks.load_client import request_bytes, run_streams

PACED = 20
PACED_RATE = 750
PACED_TOKENS = 3000  # 4 s: the body is sent 0.5 s in, and read well within the streams' life
SEND_AFTER_S = 0.5
SIZES = {"fits": 15_000, "refused": 150_000, "at_the_limit": 600_000}
STREAM_TOKENS = {"fits": PACED_TOKENS, "refused": PACED_TOKENS, "at_the_limit": 4 * PACED_TOKENS}
KEY = "sk-mock-preview"
HEADERS = {"authorization": f"Bearer {KEY}", "x-api-key": KEY, "anthropic-version": "2023-06-01"}
# The big request's own reply is short and quick: its figure is what it does to the others.
QUICK = {"x-mock-ttft-ms": "0", "x-mock-tokens-per-second": "100000"}


def conversation(messages: int) -> list[dict[str, Any]]:
    lines = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"Line {i} of the log."} for i in range(messages)
    ]
    return [*lines, {"role": "user", "content": "Sum it up."}]


def bodies(messages: int) -> dict[str, tuple[str, dict[str, Any]]]:
    lines = conversation(messages)
    return {
        "chat_completions": (
            "/v1/chat/completions",
            {"model": "gpt-5.6-sol", "messages": lines, "max_completion_tokens": 16},
        ),
        "responses": ("/v1/responses", {"model": "gpt-5.6-sol", "input": lines, "max_output_tokens": 16}),
        "anthropic_messages": ("/v1/messages", {"model": "claude-opus-4-8", "max_tokens": 16, "messages": lines}),
    }


def paced_requests(port: int, tokens: int) -> list[bytes]:
    headers = {
        "authorization": f"Bearer {KEY}",
        "x-mock-tokens-per-second": str(PACED_RATE),
        "x-mock-ttft-ms": "0",
        "x-mock-output-tokens": str(tokens),
    }
    body = {"model": "gpt-5.6-sol", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    return [request_bytes(port, "/v1/chat/completions", body, headers) for _ in range(PACED)]


async def send(port: int, request: bytes) -> int:
    """Send one request, read its whole reply; its status."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    reply = await reader.read()
    writer.close()
    return int(reply[9:12]) if reply else 0


async def scene(port: int, big: bytes | None, tokens: int = PACED_TOKENS) -> dict[str, Any]:
    """The paced streams of ``tokens`` each, with ``big`` sent :data:`SEND_AFTER_S` into them (or nothing)."""
    streams = asyncio.create_task(run_streams(port, paced_requests(port, tokens)))
    status = None
    if big is not None:
        await asyncio.sleep(SEND_AFTER_S)
        status = await send(port, big)
    traces = await streams
    gaps = sorted(gap for trace in traces for gap in trace.gaps())
    return {
        **({"big_status": status} if status is not None else {}),
        "worst_gap_ms": round(gaps[-1] * 1000, 1),
        "gap_p99_ms": round(gaps[int(len(gaps) * 0.99)] * 1000, 2),
        "fastest_stream_gap_max_ms": round(min(max(trace.gaps()) for trace in traces) * 1000, 1),
        "paced_ok": all(trace.status == 200 and trace.text_events == tokens for trace in traces),
    }


def parse_floor(payload: bytes) -> float:
    """The median of three ``orjson.loads`` of ``payload``, in ms: the one pass the server cannot cut."""
    runs = []
    for _ in range(3):
        started = time.perf_counter()
        orjson.loads(payload)
        runs.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(runs), 1)


def measure(root: Path) -> dict[str, Any]:
    """Every scene against ``root``'s server, pinned to core 0."""
    port = free_port()
    command = ["taskset", "-c", "0", sys.executable, "-m", "mockserver", "serve", "--port", str(port)]
    command += ["--log-level", "warning", "--preset", "openai", "--preset", "claude-opus-4.8-fast"]
    server = subprocess.Popen(command, cwd=root, env={**os.environ, "PYTHONPATH": str(root)})
    try:
        wait_for_port(port)
        asyncio.run(scene(port, None))  # warm-up
        report: dict[str, Any] = {"alone": asyncio.run(scene(port, None))}
        for size, messages in SIZES.items():
            for api, (path, body) in bodies(messages).items():
                request = request_bytes(port, path, body, {**HEADERS, **QUICK})
                report[f"{api}_{size}"] = asyncio.run(scene(port, request, STREAM_TOKENS[size]))
        return report
    finally:
        server.terminate()
        server.wait(timeout=10)


def main() -> None:
    parser = arguments("big_bodies", __doc__, baseline="another checkout, measured the same way after this one")
    args = parser.parse_args()
    if (os.cpu_count() or 1) > 1:
        os.sched_setaffinity(0, {1})
    load = os.getloadavg()
    floors = {}
    for size, messages in SIZES.items():
        for api, (_, body) in bodies(messages).items():
            payload = orjson.dumps(body)
            floors[f"{api}_{size}"] = {"body_mib": round(len(payload) / 2**20, 2), "parse_ms": parse_floor(payload)}
    report: dict[str, Any] = {
        "what": "20 streams at 750 tok/s while one client sends a body of 15,000, 150,000 or 600,000 one-line messages",
        "command": command_line("big_bodies"),
        "load_average_before": [round(x, 2) for x in load],
        "floor": floors,
        "mockserver": measure(ROOT),
    }
    if args.baseline:
        report["baseline"] = measure(args.baseline.resolve())
    report["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    write_results(results_path("big_bodies", args), report)
    print(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode())


if __name__ == "__main__":
    main()
