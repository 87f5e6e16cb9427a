"""What counting a prompt costs, and whether the server keeps answering while it counts a huge one.

    python -m benchmarks prompt_count [--output PATH]

1. **The GIL.** Does ``bpe-openai`` release the GIL while it counts? A thread counts a 600k-character
   text once while the main thread notes the longest stretch it could not run. Beside it, two
   controls: ``hashlib.sha256`` (which releases the GIL) and ``re.findall`` (which holds it). A count
   that holds the GIL stops the main thread for about the whole call; one that releases it, for a
   few milliseconds at most. (So a thread would not help, and the server counts in pieces instead.)
2. **The cost.** Microseconds per o200k token on prose, in this process: one whole count of a long
   text; the server's count of a 32 MiB body that stops past the default window (400k tokens); and
   the same body counted to the end, as it was before counting stopped at the window (and twice).
3. **The loop.** The same body sent to a server in a thread of this process: the longest stretch of
   CPU time its event loop was held (between turns of a 1 ms ticker on that loop, in the server
   thread's CPU time, which a busy machine does not inflate), beside the CPU time of parsing the
   body's JSON alone.
4. **The server.** ``mockserver serve`` on core 0 (this client on core 1) gets a 32 MiB chat body
   (the default body limit) while ``GET /health`` is asked every 20 ms on another connection: the
   longest and median ``/health`` latency while the body is handled, and the body's own reply
   (400 ``context_length_exceeded``) and time. Three rounds; the worst is reported, beside ``/health``
   asked the same way for as long with no body (what the machine's load alone costs).

Figures go to ``benchmarks/results/prompt_count.json``; ``docs/limits.md`` quotes them.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import statistics
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx

from benchmarks.harness import arguments, free_port, results_path, serve_on_core_zero, wait_for_port, write_results
from mockserver.engine import prompt_count, tokens

KEY = "sk-mock-preview"
BODY_LIMIT = 32 * 1024 * 1024
WINDOW = 400_000
ROUNDS = 3
PROSE = (
    "Clients are tested against the mock before they meet the real API, and each difference hides a bug "
    "until production: a prompt that does not fit, a first token that waits for the prompt, a pool that "
    "queues. Numbers like 3.14159 and names like O'Brien-Smith appear too. "
)


def gil_probe(call: Callable[[], object]) -> tuple[float, float]:
    """Run ``call`` once in a thread; its duration and the main thread's longest gap, in ms (medians of 5)."""
    durations, gaps = [], []
    for _ in range(5):
        took = [0.0]
        started = threading.Event()

        def run(took: list[float] = took, started: threading.Event = started) -> None:
            started.set()
            time.sleep(0.03)  # the main thread is timing by then
            t = time.perf_counter()
            call()
            took[0] = time.perf_counter() - t

        thread = threading.Thread(target=run)
        thread.start()
        started.wait()
        last, gap = time.perf_counter(), 0.0
        while thread.is_alive():
            now = time.perf_counter()
            gap, last = max(gap, now - last), now
        durations.append(took[0] * 1000)
        gaps.append(gap * 1000)
    return statistics.median(durations), statistics.median(gaps)


def gil() -> dict[str, Any]:
    tokens.warm()
    encoding = tokens._encoding()
    assert encoding is not None, "bpe-openai is not installed"
    text = (PROSE * (600_000 // len(PROSE)))[:600_000]  # under bpe-openai's 200k tokens per call
    data = text.encode() * 8
    pattern = re.compile(r"(\w+)\s")
    report: dict[str, Any] = {}
    for name, call in {
        "bpe_openai_count": lambda: encoding.encode_ordinary(text),
        "sha256_releases": lambda: hashlib.sha256(data).digest(),
        "re_findall_holds": lambda: pattern.findall(text),
    }.items():
        took, gap = gil_probe(call)
        report[name] = {"call_ms": round(took, 1), "main_thread_longest_gap_ms": round(gap, 1)}
    count = report["bpe_openai_count"]
    report["bpe_openai_releases_gil"] = count["main_thread_longest_gap_ms"] < 0.5 * count["call_ms"]
    return report


def cost() -> dict[str, Any]:
    text = PROSE * (4_000_000 // len(PROSE))
    started = time.perf_counter()
    whole = tokens.count(text)
    per_token_us = (time.perf_counter() - started) / whole * 1e6
    body_text = PROSE * (BODY_LIMIT // len(PROSE))
    started = time.perf_counter()
    counted = asyncio.run(prompt_count.count_messages([body_text], limit=WINDOW))
    windowed_s = time.perf_counter() - started
    started = time.perf_counter()
    full = tokens.count(body_text)
    full_s = time.perf_counter() - started
    return {
        "us_per_token": round(per_token_us, 3),
        "body_mib": 32,
        "body_tokens": full,
        "window_tokens": WINDOW,
        "count_stopping_past_window_s": round(windowed_s, 3),
        "estimated_tokens": counted.tokens,
        "count_to_the_end_s": round(full_s, 3),
        "before_counted_twice_to_the_end_s": round(2 * full_s, 3),
    }


def loop_hold() -> dict[str, Any]:
    """The 32 MiB body sent to a server running in a thread of this process: the longest stretch of CPU
    time the server's event loop was held between two turns of a 1 ms ticker running on that loop, in
    the server thread's CPU time (which a busy machine does not inflate, and which leaves out the
    client's own work), and the JSON parse alone. Median and worst of three."""
    import orjson

    from mockserver import MockServer

    text = PROSE * ((BODY_LIMIT - 200) // len(PROSE))
    body = f'{{"model": "gpt-5.6-sol", "messages": [{{"role": "user", "content": "{text}"}}]}}'.encode()
    loops: list[asyncio.AbstractEventLoop] = []
    worst: list[float] = []
    with MockServer(time_scale=0) as server:
        server.state.hooks.on_response_start.append(lambda _: loops.append(asyncio.get_running_loop()) or {})
        httpx.get(f"{server.url}/health")
        loop = loops[0]
        for _ in range(3):
            holds: list[float] = []
            stop = threading.Event()

            async def ticker(holds: list[float] = holds, stop: threading.Event = stop) -> None:
                last = time.thread_time()
                while not stop.is_set():
                    await asyncio.sleep(0.001)
                    now = time.thread_time()
                    holds.append(now - last)
                    last = now

            ticking = asyncio.run_coroutine_threadsafe(ticker(), loop)
            reply = httpx.post(
                f"{server.url}/v1/chat/completions",
                content=body,
                headers={"authorization": f"Bearer {KEY}", "content-type": "application/json"},
                timeout=120,
            )
            stop.set()
            ticking.result(timeout=10)
            assert reply.status_code == 400
            worst.append(max(holds) * 1000)
    started = time.thread_time()
    orjson.loads(body)
    parse_ms = (time.thread_time() - started) * 1000
    return {
        "longest_hold_cpu_ms": [round(w, 1) for w in worst],
        "json_parse_cpu_ms": round(parse_ms, 1),
    }


def idle_round(url: str, seconds: float) -> dict[str, Any]:
    """``/health`` asked the same way for ``seconds`` with no body being handled: the machine's own noise."""
    latencies = []
    with httpx.Client(base_url=url) as health:
        health.get("/health")
        until = time.perf_counter() + seconds
        while time.perf_counter() < until:
            started = time.perf_counter()
            health.get("/health", timeout=30)
            latencies.append((time.perf_counter() - started) * 1000)
            time.sleep(0.02)
    return {"health_max_ms": round(max(latencies), 1), "health_median_ms": round(statistics.median(latencies), 1)}


def server_round(url: str, body: bytes) -> dict[str, Any]:
    outcome: dict[str, Any] = {}

    def send() -> None:
        started = time.perf_counter()
        reply = httpx.post(
            f"{url}/v1/chat/completions",
            content=body,
            headers={"authorization": f"Bearer {KEY}", "content-type": "application/json"},
            timeout=120,
        )
        outcome.update(status=reply.status_code, code=reply.json()["error"]["code"])
        outcome["seconds"] = time.perf_counter() - started

    latencies = []
    with httpx.Client(base_url=url) as health:
        health.get("/health")
        sender = threading.Thread(target=send)
        sender.start()
        while sender.is_alive():
            started = time.perf_counter()
            health.get("/health", timeout=30)
            latencies.append((time.perf_counter() - started) * 1000)
            time.sleep(0.02)
        sender.join()
    return {
        "health_max_ms": round(max(latencies), 1),
        "health_median_ms": round(statistics.median(latencies), 1),
        "health_checks": len(latencies),
        "body_status": outcome["status"],
        "body_code": outcome["code"],
        "body_reply_s": round(outcome["seconds"], 3),
    }


def server() -> dict[str, Any]:
    port = free_port()
    command = serve_on_core_zero(port)
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    text = PROSE * ((BODY_LIMIT - 200) // len(PROSE))
    body = f'{{"model": "gpt-5.6-sol", "messages": [{{"role": "user", "content": "{text}"}}]}}'.encode()
    try:
        wait_for_port(port, timeout=60)
        url = f"http://127.0.0.1:{port}"
        httpx.get(f"{url}/health", timeout=30)
        rounds = [server_round(url, body) for _ in range(ROUNDS)]
        idle = idle_round(url, max(r["body_reply_s"] for r in rounds))
    finally:
        process.terminate()
        process.wait(timeout=10)
    worst = max(rounds, key=lambda r: r["health_max_ms"])
    return {"body_bytes": len(body), "rounds": rounds, "worst": worst, "idle": idle}


def main() -> None:
    parser = arguments("prompt_count", __doc__)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    report = {"load_average_1m": round(load, 2), "gil": gil(), "cost": cost(), "loop": loop_hold(), "server": server()}
    write_results(results_path("prompt_count", args), report)
    print(report)


if __name__ == "__main__":
    main()
