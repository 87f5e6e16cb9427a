"""The streaming sweep: mockserver against the raw floor and a peer mock, in one run, as ratios.

Every server under test runs in its own process pinned to core 0; this process, the
load client (``load_client.py``, one uvloop protocol per stream), pins itself to core 1. Both
run at ``nice -10`` when allowed (as root), so other work on a shared machine disturbs
the figures less; the load average before and after is in the report.
Servers take turns, cell by cell, so each ratio compares figures taken minutes apart
on the same machine.

Servers:
- ``mockserver``: this checkout, ``python -m mockserver serve`` with a benchmark
  fixture (Ultrafast capacity and rate limits raised so 600 streams are admitted);
- ``floor``: ``servers/floor.py``, a bare asyncio server with the same deadlines
  and pre-encoded events: what the loop and the kernel alone cost;
- ``uvicorn``: ``servers/uvicorn_floor.py``, a bare ASGI callable with the same deadlines and
  pre-encoded events under uvicorn (uvloop, httptools), as mockserver runs: what the HTTP
  server alone costs over the floor;
- ``minimum`` (in the TTFT-0 cells and the request costs): ``servers/minimum.py``, the uvicorn
  floor doing the least an OpenAI-compatible endpoint must before a stream opens (check the path
  and the key, parse and validate the body against the Chat Completions schema, look the model up,
  send the live API's headers): what any server on this stack pays per request;
- ``aimock``: ``@copilotkit/aimock`` from npm (``npm ci --prefix benchmarks/peers``),
  when Node and the package are there; its fixture asks for the same tokens, rate
  (its ``tps`` counts chunks, so it gets rate / tokens-per-chunk) and TTFT;
- ``baseline`` (``--baseline DIR``): mockserver from another checkout, for before/after.

Cells:
- concurrency: 750 tokens/s, 1 to 600 streams, 1 and 4 tokens per chunk;
- rates: 27, 54, 135, 750 and 2000 tokens/s, at 1 and 100 streams;
- TTFT 0: 750 tokens/s, 1,500 tokens (two seconds), every stream sent at once, at 1 to 250
  streams: with no TTFT to hide it in, the server's cost per request shows in the first token,
  and a stream that then ran faster than its rate to catch up would show in the fastest stream;
- time scale 0: a 2,000-token reply, streamed and not, one request at a time;
- a burst: 250 eight-token streams sent together, for the server CPU one request costs
  (``request_cost`` in the JSON): 250 of them must fit in the 200 ms TTFT for the
  first tokens of a 250-stream burst to be on time;
- an opening (with the TTFT-0 cells): 150 streams with a 10 s TTFT sent together, the server's
  CPU read as soon as every stream is open (``open_cost``): the CPU a request costs before its
  stream opens, with none of its events and none of its ending in the figure.

Per cell and server: the slowest and fastest stream's achieved rate over the target (each
stream's from its first text event to its last), and the worst of either side,
chunks per token (text events x tokens-per-chunk / tokens: 1.0 is as configured),
the p99 gap between text events, TTFT overhead (first text event minus the configured
TTFT) p50 and p99 and the p99's ratio to the floor's, the TTFT overhead's median in each tenth
of the streams in the order they were sent (``ttft_overhead_ms_by_tenth``: how the wait grows
through a burst), server CPU per SSE event (from /proc) and
its ratio to the floor, the gap p99's ratio to the floor's, server CPU per request (from the
burst) and its ratio to the floor's,
and the server's CPU load. A server that falls apart (a stream under half its rate,
or failed requests) is not driven harder.

    python -m benchmarks sweep                 # the full sweep, about 10 minutes
    python -m benchmarks sweep --quick         # a smoke run, under a minute
    python -m benchmarks sweep --baseline ../other-checkout
    python -m benchmarks sweep --levels 100,250,600 --rates 0   # only some cells
    python -m benchmarks sweep --ttft0-only    # the TTFT-0 cells and the request cost, a few minutes

Writes ``benchmarks/results/sweep.json`` and the plots ``sweep-rate.png``,
``sweep-chunks.png``, ``sweep-cpu.png`` and ``sweep-rates.png`` (``pip install -e ".[benchmarks]"``
for matplotlib; without it only the JSON is written).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvloop

from benchmarks.harness import (
    HERE,
    RESULTS,
    ROOT,
    SERVERS,
    arguments,
    command_line,
    free_port,
    wait_for_port,
    write_results,
)
from benchmarks.load_client import CHAT_TEXT, Trace, open_streams, request_bytes, run_streams

PEERS = HERE / "peers"
AIMOCK_CLI = PEERS / "node_modules" / "@copilotkit" / "aimock" / "dist" / "cli.js"
CHAT_PATH = "/v1/chat/completions"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

TTFT_MS = 200  # Ultrafast's configured TTFT
TTFT0_LEVELS = [1, 10, 50, 100, 150, 250]  # the TTFT-0 cells' stream counts
TTFT0_SECONDS = 2.0  # 1,500 tokens at 750 tokens/s
ULTRAFAST = 750.0
LEVELS = [1, 10, 50, 100, 150, 200, 250, 300, 400, 600]
RATES = [27.0, 54.0, 135.0, 750.0, 2000.0]
RATE_LEVELS = [1, 100]
TOKENS_PER_CHUNK = [1, 4]
STREAM_SECONDS = 2.0
BURST_REQUESTS = 250  # request_cost(): one burst of this many short streams
BURST_TOKENS = 8  # tokens in each of them
BURST_ROUNDS = 5  # bursts measured; the median is given
OPEN_REQUESTS = 150  # open_cost(): streams opened together, the most the goals are read at
OPEN_TTFT_MS = 10_000  # their TTFT: no event falls due while the CPU is read
SCALE0_TOKENS = 2000
SCALE0_REQUESTS = 40


@dataclass
class Server:
    name: str
    port: int
    process: subprocess.Popen[bytes]

    def cpu_seconds(self) -> float:
        """CPU time of the server process, every thread's, from /proc: the scheduler's own count in
        nanoseconds (``schedstat``) where the kernel keeps it, else user + system time in clock ticks
        (10 ms each: too coarse for a burst of a few dozen milliseconds)."""
        tasks = Path(f"/proc/{self.process.pid}/task")
        try:
            return sum(int((task / "schedstat").read_text().split()[0]) for task in tasks.iterdir()) / 1e9
        except (OSError, ValueError, IndexError):
            fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def bench_fixture(directory: Path, tokens_per_chunk: int, root: Path = ROOT) -> Path:
    """``root``'s built-in fixture with room for 600 streams and the given tokens per chunk."""
    text = (root / "fixtures" / "default.yaml").read_text()
    text = re.sub(r"tokens_per_chunk: \d+", f"tokens_per_chunk: {tokens_per_chunk}", text)
    text = re.sub(r"ultrafast_concurrency: \d+", "ultrafast_concurrency: 10000", text)
    text = re.sub(r"rpm: \d+", "rpm: 10000000", text)
    text = re.sub(r"tpm: \d+", "tpm: 10000000000", text)
    path = directory / f"bench-{tokens_per_chunk}-{abs(hash(str(root)))}.yaml"
    path.write_text(text)
    return path


def aimock_fixture(directory: Path, cells: list[tuple[float, int, int]]) -> Path:
    """One aimock fixture per (rate, tokens, tokens per chunk), matched on the user message."""
    fixtures = [
        {
            "match": {"userMessage": aimock_message(rate, tokens, per_chunk)},
            "response": {"content": " word" * tokens},
            "chunkSize": 5 * per_chunk,
            "streamingProfile": {"ttft": TTFT_MS, "tps": rate / per_chunk},
        }
        for rate, tokens, per_chunk in cells
    ]
    path = directory / "aimock.json"
    path.write_text(json.dumps({"fixtures": fixtures}))
    return path


def aimock_message(rate: float, tokens: int, per_chunk: int) -> str:
    return f"bench {rate:g} {tokens} {per_chunk}"


@contextlib.contextmanager
def started(commands: dict[str, tuple[list[str], dict[str, str]]]) -> Iterator[dict[str, Server]]:
    pin = ["taskset", "-c", "0"] if shutil.which("taskset") and (os.cpu_count() or 1) > 1 else []
    pin = PRIORITY + pin
    servers: dict[str, Server] = {}
    try:
        for name, (command, env) in commands.items():
            port = free_port()
            argv = [str(port) if part == "PORT" else part for part in command]
            process = subprocess.Popen(
                pin + argv,
                env={**os.environ, **env},
                # `python -m mockserver` looks in its working directory first: run each checkout's in its own.
                cwd=env.get("PYTHONPATH"),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            servers[name] = Server(name, port, process)
        for server in servers.values():
            wait_for_port(server.port, timeout=30)
        yield servers
    finally:
        for server in servers.values():
            server.process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                server.process.wait(timeout=10)


def server_commands(
    tokens_per_chunk: int,
    directory: Path,
    aimock: Path | None,
    baseline: Path | None,
    time_scale: float = 1.0,
    minimum: bool = False,
) -> dict[str, tuple[list[str], dict[str, str]]]:
    fixture = str(bench_fixture(directory, tokens_per_chunk))
    serve = [sys.executable, "-m", "mockserver", "serve", "--port", "PORT", "--log-level", "warning"]
    serve += ["--config", fixture, "--time-scale", str(time_scale)]
    commands: dict[str, tuple[list[str], dict[str, str]]] = {"mockserver": (serve, {"PYTHONPATH": str(ROOT)})}
    if time_scale == 1.0:
        commands["floor"] = ([sys.executable, str(SERVERS / "floor.py"), "PORT"], {})
        commands["uvicorn"] = (
            [sys.executable, str(SERVERS / "uvicorn_floor.py"), "PORT"],
            {"PYTHONPATH": str(SERVERS)},
        )
        if minimum:
            commands["minimum"] = (
                [sys.executable, str(SERVERS / "minimum.py"), "PORT"],
                {"PYTHONPATH": str(SERVERS)},
            )
        if aimock is not None:
            node = shutil.which("node") or "node"
            cli = [node, str(AIMOCK_CLI), "--port", "PORT", "--fixtures", str(aimock), "--log-level", "silent"]
            commands["aimock"] = (cli, {})
    if baseline is not None:
        base = [*serve[: serve.index("--config") + 1], str(bench_fixture(directory, tokens_per_chunk, baseline))]
        base += serve[serve.index("--config") + 2 :]
        commands["baseline"] = (base, {"PYTHONPATH": str(baseline)})
    return commands


_PROMPTS = itertools.count()  # numbers the sweep's prompts, so no prompt recurs in a run


def requests_for(
    server: str, port: int, rate: float, tokens: int, per_chunk: int, streams: int, ttft_ms: float = TTFT_MS
) -> list[bytes]:
    headers = {
        "authorization": "Bearer sk-mock-preview",
        "x-mock-tokens-per-second": f"{rate:g}",
        "x-mock-ttft-ms": f"{ttft_ms:g}",
        "x-mock-output-tokens": str(tokens),
        "x-mock-tokens-per-chunk": str(per_chunk),  # read by the floor
    }
    out = []
    for i in range(streams):
        # A prompt of its own per request, so nothing the server remembers of a recurring prompt
        # (its token count, its cues) flatters the figures; aimock matches its fixture on the text.
        content = aimock_message(rate, tokens, per_chunk) if server == "aimock" else f"benchmark {next(_PROMPTS)}"
        body = {"model": "gpt-5.6-sol", "messages": [{"role": "user", "content": content}], "stream": True, "seed": i}
        out.append(request_bytes(port, CHAT_PATH, body, headers))
    return out


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def by_tenth(values: list[float]) -> list[float]:
    """The median of each tenth of ``values``, in their order (fewer parts for fewer than ten values)."""
    parts = min(10, len(values))
    return [statistics.median(values[len(values) * k // parts : len(values) * (k + 1) // parts]) for k in range(parts)]


async def run_cell(
    server: Server,
    rate: float,
    per_chunk: int,
    streams: int,
    seconds: float,
    ramp_s: float = 0.0,
    ttft_ms: float = TTFT_MS,
) -> dict[str, Any]:
    tokens = max(8, int(rate * seconds))
    requests = requests_for(server.name, server.port, rate, tokens, per_chunk, streams, ttft_ms)
    cpu_before, wall_before = server.cpu_seconds(), time.perf_counter()
    traces: list[Trace] = await run_streams(server.port, requests, CHAT_TEXT, ramp_s)
    cpu, wall = server.cpu_seconds() - cpu_before, time.perf_counter() - wall_before
    good = [t for t in traces if t.status == 200 and t.reads]
    row: dict[str, Any] = {"streams": streams, "tokens": tokens, "failed": len(traces) - len(good)}
    if not good:
        return row
    ratios = [(tokens - per_chunk) / (t.last_text - t.first_text) / rate for t in good if t.last_text > t.first_text]
    ttfts = [(t.first_text - t.sent_at) * 1000 - ttft_ms for t in good]
    gaps = [g for t in good for g in t.gaps()]
    events = sum(t.events for t in traces)
    row.update(
        rate_ratio_min=min(ratios, default=float("nan")),
        rate_ratio_max=max(ratios, default=float("nan")),
        worst_rate_error_pct=max((abs(r - 1) for r in ratios), default=float("nan")) * 100,
        chunks_per_token=statistics.fmean(t.text_events * per_chunk / tokens for t in good),
        chunks_per_token_min=min(t.text_events * per_chunk / tokens for t in good),
        gap_ms_p99=percentile(gaps, 0.99) * 1000,
        ttft_overhead_ms_p50=statistics.median(ttfts),
        ttft_overhead_ms_p99=percentile(ttfts, 0.99),
        # In the order the requests were sent: how the wait for a first token grows through a burst.
        ttft_overhead_ms_by_tenth=by_tenth(ttfts),
        events=events,
        server_cpu_s=cpu,
        server_cpu_pct=100 * cpu / wall,
        cpu_us_per_event=cpu / events * 1e6 if events else float("nan"),
    )
    return row


async def warm_up(servers: dict[str, Server], per_chunk: int) -> None:
    """A few short streams per server before the first cell: a server's socket listens while it
    is still starting (mockserver loads its tokenizer, about 2 s), and the first cell would
    otherwise measure that start-up instead of the streams."""
    for server in servers.values():
        await run_cell(server, ULTRAFAST, per_chunk, 4, 0.2)


async def request_cost(server: Server, requests: int) -> dict[str, Any]:
    """The server CPU a burst of streaming requests costs, next to nothing of it their tokens:
    ``requests`` streams of :data:`BURST_TOKENS` tokens sent together, CPU per request (the median
    of :data:`BURST_ROUNDS` bursts, after one not counted: the first after start-up costs more).
    It is what decides whether a burst is admitted within its TTFT. Every request has a prompt of
    its own, in every burst and cell of the run. (A one-token reply would take a path of its own, so the replies
    are a few tokens long, as generated replies are made.)"""
    rounds = []
    for burst in range(BURST_ROUNDS + 1):
        batch = requests_for(server.name, server.port, ULTRAFAST, BURST_TOKENS, 1, requests)
        cpu_before, wall_before = server.cpu_seconds(), time.perf_counter()
        traces = await run_streams(server.port, batch, CHAT_TEXT)
        cpu, wall = server.cpu_seconds() - cpu_before, time.perf_counter() - wall_before
        if burst:
            rounds.append((cpu, wall, sum(1 for t in traces if t.status == 200)))
    cpu, wall, served = sorted(rounds)[len(rounds) // 2]
    return {
        "requests": requests,
        "served": served,
        "cpu_ms_per_request": cpu / requests * 1000,
        "cpu_ms_per_request_rounds": [c / requests * 1000 for c, _, _ in rounds],
        "burst_cpu_ms": cpu * 1000,
        "wall_ms": wall * 1000,
    }


async def open_cost(server: Server, requests: int) -> dict[str, Any]:
    """The server CPU a request costs *before its stream opens*, which is how the goal on CPU per
    request is worded: ``requests`` streams sent together with a TTFT of :data:`OPEN_TTFT_MS`, the
    server's CPU read once every reply's head (its 200 and headers) has come, then every client
    leaves. No event of any stream is due by then, so none is in the figure; nor is what the
    server does when a stream ends. The median of :data:`BURST_ROUNDS` bursts, after one not
    counted; every request has a prompt of its own."""
    rounds = []
    for burst in range(BURST_ROUNDS + 1):
        batch = requests_for(server.name, server.port, ULTRAFAST, BURST_TOKENS, 1, requests, ttft_ms=OPEN_TTFT_MS)
        cpu_before = server.cpu_seconds()
        transports = await open_streams(server.port, batch)
        await asyncio.sleep(0.02)  # the last head was written before the server's request task returned
        cpu = server.cpu_seconds() - cpu_before
        for transport in transports:
            transport.close()
        await asyncio.sleep(0.5)  # the server lets the streams go before the next burst
        if burst:
            rounds.append(cpu)
    rounds_ms = [cpu / requests * 1000 for cpu in rounds]
    return {
        "requests": requests,
        "ttft_ms": OPEN_TTFT_MS,
        "cpu_ms_per_request": statistics.median(rounds_ms),
        "cpu_ms_per_request_rounds": rounds_ms,
    }


def broken(row: dict[str, Any]) -> bool:
    return bool(row.get("failed")) or not row.get("rate_ratio_min", 0) >= 0.5


def add_floor_ratio(cell: dict[str, Any]) -> None:
    floor = cell["servers"].get("floor", {})
    for name, row in cell["servers"].items():
        if name != "floor" and row.get("events") and floor.get("cpu_us_per_event"):
            row["cpu_per_event_vs_floor"] = row["cpu_us_per_event"] / floor["cpu_us_per_event"]
        if name != "floor" and row.get("gap_ms_p99") and floor.get("gap_ms_p99"):
            row["gap_p99_vs_floor"] = row["gap_ms_p99"] / floor["gap_ms_p99"]
        if name != "floor" and "ttft_overhead_ms_p99" in row and floor.get("ttft_overhead_ms_p99"):
            # TTFT p99 against the floor's: the goal is at most 1.5x the floor's plus 10 ms.
            row["ttft_p99_vs_floor"] = row["ttft_overhead_ms_p99"] / floor["ttft_overhead_ms_p99"]
            row["ttft_p99_within_goal"] = row["ttft_overhead_ms_p99"] <= 1.5 * floor["ttft_overhead_ms_p99"] + 10


def add_request_ratio(costs: dict[str, dict[str, Any]]) -> None:
    """CPU per request against the floor's, measured in the same burst (the goal: at most 2x)."""
    floor = costs.get("floor", {}).get("cpu_ms_per_request")
    uvicorn = costs.get("uvicorn", {}).get("cpu_ms_per_request")
    for name, cost in costs.items():
        if name != "floor" and floor:
            cost["cpu_per_request_vs_floor"] = cost["cpu_ms_per_request"] / floor
        if name not in ("floor", "uvicorn") and uvicorn:
            # What the app costs over the HTTP server it runs in.
            cost["cpu_per_request_vs_uvicorn"] = cost["cpu_ms_per_request"] / uvicorn


async def sweep_phase(
    servers: dict[str, Server], cells: list[tuple[float, int, int]], seconds: float, ttft_ms: float = TTFT_MS
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    given_up: set[tuple[str, float]] = set()
    for rate, per_chunk, streams in cells:
        cell: dict[str, Any] = {"rate": rate, "tokens_per_chunk": per_chunk, "streams": streams, "servers": {}}
        cell["ttft_ms"] = ttft_ms
        for name, server in servers.items():
            if (name, rate) in given_up:
                continue
            row = await run_cell(server, rate, per_chunk, streams, seconds, ttft_ms=ttft_ms)
            cell["servers"][name] = row
            if broken(row):
                given_up.add((name, rate))
            await asyncio.sleep(0.3)  # let the closed connections drain before the next server
        add_floor_ratio(cell)
        out.append(cell)
        print(line_for(cell), flush=True)
    return out


def line_for(cell: dict[str, Any]) -> str:
    parts = [f"{cell['rate']:6g} tok/s x{cell['streams']:4d} ({cell['tokens_per_chunk']}/chunk):"]
    for name, row in cell["servers"].items():
        if "rate_ratio_min" not in row:
            parts.append(f"{name} failed")
            continue
        vs = row.get("cpu_per_event_vs_floor")
        parts.append(
            f"{name} rate {row['rate_ratio_min']:.4f}-{row['rate_ratio_max']:.4f} "
            f"chunks {row['chunks_per_token_min']:.2f} "
            f"gap99 {row['gap_ms_p99']:.1f}ms ttft99 +{row['ttft_overhead_ms_p99']:.1f}ms "
            f"cpu {row['cpu_us_per_event']:.1f}us/ev{f' (x{vs:.2f})' if vs else ''} {row['server_cpu_pct']:.0f}%"
        )
    return " | ".join(parts)


async def time_scale_zero(server: Server, stream: bool, requests: int) -> dict[str, Any]:
    """A 2,000-token reply at time scale 0, one request at a time: client wall time and server CPU each."""
    headers = {"authorization": "Bearer sk-mock-preview", "x-mock-output-tokens": str(SCALE0_TOKENS)}
    walls, cpus = [], []
    for i in range(requests):
        body = {"model": "gpt-5.6-sol", "messages": [{"role": "user", "content": "scale zero"}], "stream": stream}
        request = request_bytes(server.port, CHAT_PATH, {**body, "seed": i}, headers)
        cpu = server.cpu_seconds()
        start = time.perf_counter()
        (trace,) = await run_streams(server.port, [request], b'"content":"')
        walls.append((trace.ended_at - start) * 1000)
        cpus.append((server.cpu_seconds() - cpu) * 1000)
        if trace.status != 200:
            raise RuntimeError(f"time scale 0 request failed with HTTP {trace.status}")
    walls = walls[2:]  # the first requests warm the server up
    return {
        "stream": stream,
        "tokens": SCALE0_TOKENS,
        "requests": len(walls),
        "wall_ms_p50": statistics.median(walls),
        "wall_ms_p99": percentile(walls, 0.99),
        "server_cpu_ms_mean": statistics.fmean(cpus[2:]),
    }


PRIORITY: list[str] = []  # "nice -n -10" for the servers, when this process may raise its own priority
NICE = -10


def raise_priority() -> None:
    """On a shared machine, run the client and the servers at a higher priority than other work
    (when allowed: as root), so the figures measure them rather than the neighbours."""
    try:
        os.nice(NICE)
    except OSError:
        return
    PRIORITY[:] = ["nice", "-n", str(NICE)]


def machine_load() -> dict[str, Any]:
    load1, load5, load15 = os.getloadavg()
    return {"cores": os.cpu_count(), "loadavg_1_5_15": [load1, load5, load15]}


def _numbers(text: str) -> list[float]:
    return [float(part) for part in text.split(",") if part.strip()]


def main() -> int:
    parser = arguments(
        "sweep",
        __doc__,
        quick="a smoke run: fewer cells, one-second streams",
        seconds=f"length of each stream (default {STREAM_SECONDS:g})",
        baseline="also run mockserver from this checkout, for before/after",
    )
    parser.add_argument("--no-peer", action="store_true", help="leave out aimock even when it is installed")
    parser.add_argument("--levels", type=_numbers, help="only these stream counts at 750 tokens/s, e.g. 100,250,600")
    parser.add_argument("--rates", type=_numbers, help="only these rates in the rate cells; 0 for none")
    parser.add_argument("--ttft0-levels", type=_numbers, help="stream counts of the TTFT-0 cells; 0 for none")
    parser.add_argument("--ttft0-only", action="store_true", help="only the TTFT-0 cells and the request cost")
    args = parser.parse_args()
    seconds = args.seconds or (1.0 if args.quick else STREAM_SECONDS)
    levels = [int(n) for n in args.levels] if args.levels else [1, 100, 250] if args.quick else LEVELS
    rates = [r for r in args.rates if r > 0] if args.rates else [54.0, 2000.0] if args.quick else RATES
    ttft0_levels = [int(n) for n in args.ttft0_levels if n > 0] if args.ttft0_levels else TTFT0_LEVELS
    default_name = "sweep-ttft0.json" if args.ttft0_only else "sweep-quick.json" if args.quick else "sweep.json"
    output = args.output or RESULTS / default_name

    if (os.cpu_count() or 1) > 1 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {1})
    raise_priority()
    aimock_ok = not args.no_peer and AIMOCK_CLI.exists() and shutil.which("node") is not None
    peer_note = "aimock: run" if aimock_ok else f"aimock: not run ({'--no-peer' if args.no_peer else 'not installed'})"

    report: dict[str, Any] = {
        "benchmark": "sweep",
        "command": command_line("sweep"),
        "machine_before": machine_load(),
        "priority": " ".join(PRIORITY) or "default",
        "stream_seconds": seconds,
        "ttft_ms": TTFT_MS,
        "peer": peer_note,
        "phases": {},
    }
    started_at = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        if ttft0_levels:
            # TTFT 0, every stream at once, 1,500 tokens each: the cells the goals are read from.
            with started(server_commands(1, directory, None, args.baseline, minimum=True)) as servers:
                uvloop.run(warm_up(servers, 1))
                report["request_cost"] = costs = {
                    name: uvloop.run(request_cost(server, BURST_REQUESTS)) for name, server in servers.items()
                }
                add_request_ratio(costs)
                for name, cost in costs.items():
                    print(f"a burst of {BURST_REQUESTS} requests, {name}: {cost}", flush=True)
                report["open_cost"] = opened = {
                    name: uvloop.run(open_cost(server, OPEN_REQUESTS)) for name, server in servers.items()
                }
                add_request_ratio(opened)
                for name, cost in opened.items():
                    print(f"{OPEN_REQUESTS} streams opened together, {name}: {cost}", flush=True)
                cells = [(ULTRAFAST, 1, n) for n in ttft0_levels]
                report["phases"]["ttft_0"] = uvloop.run(sweep_phase(servers, cells, TTFT0_SECONDS, ttft_ms=0))
        for per_chunk in [] if args.ttft0_only else TOKENS_PER_CHUNK:
            cells = [(ULTRAFAST, per_chunk, n) for n in levels]
            if per_chunk == 1 and rates:
                cells += [(rate, 1, n) for n in RATE_LEVELS for rate in rates]
            tokens_cells = [(rate, max(8, int(rate * seconds)), pc) for rate, pc, _ in cells]
            aimock = aimock_fixture(directory, tokens_cells) if aimock_ok else None
            with started(server_commands(per_chunk, directory, aimock, args.baseline)) as servers:
                uvloop.run(warm_up(servers, per_chunk))
                if per_chunk == 1 and "request_cost" not in report:
                    report["request_cost"] = costs = {
                        name: uvloop.run(request_cost(server, BURST_REQUESTS))
                        for name, server in servers.items()
                        if name != "aimock"  # its fixture matches messages per cell; not this one
                    }
                    add_request_ratio(costs)
                    for name, cost in costs.items():
                        print(f"a burst of {BURST_REQUESTS} requests, {name}: {cost}", flush=True)
                # The concurrency cells and the rate cells each give up on a server separately.
                concurrency, by_rate = cells[: len(levels)], cells[len(levels) :]
                rows = uvloop.run(sweep_phase(servers, concurrency, seconds))
                rows += uvloop.run(sweep_phase(servers, by_rate, seconds)) if by_rate else []
                report["phases"][f"tokens_per_chunk_{per_chunk}"] = rows
        zero: dict[str, Any] = {}
        with (
            contextlib.nullcontext({})
            if args.ttft0_only
            else started(server_commands(1, directory, None, args.baseline, time_scale=0.0)) as servers
        ):
            for name, server in servers.items():
                zero[name] = [
                    uvloop.run(time_scale_zero(server, stream, 10 if args.quick else SCALE0_REQUESTS))
                    for stream in (True, False)
                ]
                print(f"time scale 0, {SCALE0_TOKENS} tokens, {name}: {zero[name]}", flush=True)
        report["time_scale_0"] = zero
    report["machine_after"] = machine_load()
    report["minutes"] = (time.monotonic() - started_at) / 60
    report["when"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())  # last, as the sweep always wrote it
    write_results(output, report, stamp=False)
    print(f"figures -> {output}")
    if args.ttft0_only:
        return 0  # the plots draw the full sweep's cells
    try:
        from benchmarks.pictures.sweep_plots import plot_sweep
    except ImportError:
        print("matplotlib is not installed (pip install -e '.[benchmarks]'): no plots")
        return 0
    for path in plot_sweep(report, output.parent, output.stem):
        print(f"plot -> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
