"""CPU of one streaming request before its stream opens: the app alone, no socket, no other process.

Calls the ASGI app directly with a streaming ``gpt-5.6-sol`` Chat Completions request (1,500
output tokens at 750 tokens/s, TTFT 200 ms, the built-in fixture with rate limits out of reach,
a prompt of its own each time) whose client leaves as soon as the stream is open, ``--requests``
times after a warm-up. What it measures is everything the server does for a request up to its
stream being on the scheduler: the middleware, routing, parsing, admission (key, model, tier,
quota, rate windows), planning, the reply headers, and the journal, ledger and metrics when the
exchange closes. When a burst of streams starts together, this is what the last of them waits
for before its first token. It also gives the part of it until the reply's head is sent
(``cpu_us_until_head``): what the request itself waits for before its stream starts.

``--api responses`` sends the same request to the Responses API instead (``input`` for ``messages``).

The garbage collector is set as the server sets it once it is up (``settle_heap``: start-up's
objects frozen out of its sight, and the young generation's threshold where the checkout raises
it). The figure is CPU time (``time.process_time``), which other work on a shared machine
disturbs much less than wall time; ``--baseline DIR`` measures another checkout in the same run,
alternating, for before/after.

    python -m benchmarks request_cpu [--api chat|responses] [--requests 1000] [--rounds 3] [--baseline DIR]
                                     [--output FILE]

Writes ``benchmarks/results/request_cpu.json``.
"""

from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

from benchmarks.harness import (
    alternate,
    arguments,
    checkouts,
    command_line,
    results_path,
    run_in_checkout,
    write_results,
)

ROUNDS = 3  # runs per checkout, alternating; the median is reported
WARM_UP = 50

# The measurement itself, run in a fresh interpreter per checkout (so each imports its own code).
PROGRAM = r"""
import asyncio, json, sys, time
from mockserver.server.app import create_app
from mockserver.config.fixture import Fixture, load_fixture
from mockserver.config.settings import Settings

requests, warm_up, api = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
path = {"chat": "/v1/chat/completions", "responses": "/v1/responses"}[api]
data = load_fixture().model_dump()
data["rate_limits"] = {"rpm": 10**9, "tpm": 10**12}  # never the limit: every request is admitted
app = create_app(Settings(log_level="warning"), fixture=Fixture.model_validate(data))
from mockserver.api.asgi.collector import settle_heap
settle_heap()  # as the server does once it is up: start-up's objects frozen, and what else it sets
headers = [(b"host", b"mock"), (b"content-type", b"application/json"), (b"authorization", b"Bearer sk-mock-preview"),
           (b"x-mock-tokens-per-second", b"750"), (b"x-mock-ttft-ms", b"200"), (b"x-mock-output-tokens", b"1500")]


async def one(n):
    # A prompt of its own for every request: nothing remembered of a recurring prompt flatters the figure.
    prompt = f"benchmark request {n}"
    said = {"messages": [{"role": "user", "content": prompt}]} if api == "chat" else {"input": prompt}
    body = json.dumps({"model": "gpt-5.6-sol", **said, "stream": True, "seed": 1}).encode()
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": b"",
             "root_path": "", "headers": [*headers, (b"content-length", str(len(body)).encode())],
             "client": ("127.0.0.1", 1234), "server": ("127.0.0.1", 8000), "state": {}}
    sent = False

    async def receive():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}  # the client leaves once the stream is open

    statuses = []
    started = time.process_time()

    async def send(message):
        if message["type"] == "http.response.start":
            statuses.append(message["status"])
            until_head.append(time.process_time() - started)

    await app(scope, receive, send)
    assert statuses == [200], statuses


until_head = []


async def main():
    async with app.router.lifespan_context(app):
        for n in range(warm_up):
            await one(-n)
        del until_head[:]
        cpu = time.process_time()
        for n in range(requests):
            await one(n)
        print((time.process_time() - cpu) / requests * 1e6, sum(until_head) / requests * 1e6)


asyncio.run(main())
"""


def measure(root: Path, requests: int, api: str) -> tuple[float, float]:
    """CPU µs per request: the whole request, and until its head is sent."""
    whole, until_head = run_in_checkout(root, PROGRAM, requests, WARM_UP, api)[-2:]
    return float(whole), float(until_head)


def main() -> int:
    parser = arguments("request_cpu", __doc__, baseline="also measure mockserver from this checkout")
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--api", choices=("chat", "responses"), default="chat", help="the API the request is sent to")
    args = parser.parse_args()
    both = alternate(checkouts(args.baseline), args.rounds, lambda root: measure(root, args.requests, args.api))
    runs = {name: [whole for whole, _ in v] for name, v in both.items()}
    heads = {name: [until_head for _, until_head in v] for name, v in both.items()}
    report = {
        "benchmark": "request_cpu",
        "command": command_line("request_cpu"),
        "loadavg_1_5_15_after": list(os.getloadavg()),
        "api": args.api,
        "requests": args.requests,
        "cpu_us_per_request": {
            name: {"median": statistics.median(v), "min": min(v), "runs": v} for name, v in runs.items()
        },
        "cpu_us_until_head": {
            name: {"median": statistics.median(v), "min": min(v), "runs": v} for name, v in heads.items()
        },
    }
    if "baseline" in runs:
        report["ours_over_baseline"] = statistics.median(runs["mockserver"]) / statistics.median(runs["baseline"])
    output = write_results(results_path("request_cpu", args), report, stamp=False)
    for name, v in runs.items():
        runs_text = ", ".join(f"{x:.0f}" for x in v)
        print(f"{name}: {statistics.median(v):.0f} us CPU per request, median (least {min(v):.0f}; runs {runs_text})")
    for name, v in heads.items():
        print(f"{name}: {statistics.median(v):.0f} us CPU per request until its head is sent, median")
    if "ours_over_baseline" in report:
        print(f"mockserver / baseline: {report['ours_over_baseline']:.2f}")
    print(f"figures -> {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
