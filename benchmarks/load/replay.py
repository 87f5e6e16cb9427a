"""Record and replay on the real clock: what the proxy adds, how faithful replay is, what it costs.

Every server is its own process on loopback (``mockserver serve``, ``mockserver record``); the
client is this script, timing each SSE event as it arrives. In one run:

1. **Proxy latency**: the same streams (100 tokens at 100 tokens/s, TTFT 200 ms) read directly
   from an upstream and through ``mockserver record``; the proxy's added TTFT and added lateness
   per event are the medians' differences.
2. **Replay fidelity**: those recorded streams replayed with ``--replay-timing recorded``: replayed
   TTFT and duration against the recorded ones; then five 750-token replies replayed with ``tier``
   as Ultrafast: the rate the client sees (tokens after the first event over the time to the last).
3. **Calibrate**: 8 streams recorded from an upstream paced at 300 tokens/s with a 150 ms TTFT,
   calibrated, and the fragment served: the written and the served figures against 300 and 150.
4. **What-if**: a 10-call agent session (0.1 s of client work between calls) recorded, computed at
   standard and Ultrafast, and driven against a replaying server: measured against computed; the
   picture is written to ``results/whatif.png`` (and the manual's ``docs/images/whatif.png``).
5. **CPU per event**: the server's CPU time (``/proc``) for 40 streams of 300 one-token events,
   replayed (``instant``) against generated (30,000 tokens/s).

    python -m benchmarks replay [--output FILE]

Writes ``benchmarks/results/replay.json``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import yaml

from benchmarks.harness import RESULTS, ROOT, arguments, free_port, results_path, wait_for_port, write_results

KEY = "sk-mock-preview"
MODEL = "gpt-5.6-sol"
_CLIENT: dict[str, httpx.Client] = {}
PACED = {"x-mock-tokens-per-second": "100", "x-mock-ttft-ms": "200", "x-mock-output-tokens": "100"}


@contextlib.contextmanager
def process(*args: str, warm: dict[str, Any] | None = None) -> Iterator[tuple[str, int]]:
    """``mockserver ARGS --port P`` in its own process, warmed by one request (``warm``: its body); URL and pid."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mockserver", *args, "--port", str(port), "--log-level", "warning"],
        env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_for_port(port, timeout=90)  # a busy shared machine can take a while to start a process
        url = f"http://127.0.0.1:{port}"
        if args[0] == "serve":  # the first request loads the tokenizer's vocabulary: not what is measured
            body = warm or {"model": MODEL, "messages": [{"role": "user", "content": "warm"}]}
            httpx.post(f"{url}/v1/chat/completions", json=body, timeout=60,
                       headers={"authorization": f"Bearer {KEY}", "x-mock-ttft-ms": "0"})  # fmt: skip
        yield url, proc.pid
    finally:
        client = _CLIENT.pop(f"http://127.0.0.1:{port}", None)
        if client is not None:
            client.close()
        proc.terminate()
        proc.wait(60)


def stream(
    url: str, body: dict[str, Any], headers: dict[str, str] | None = None
) -> tuple[float, list[float], dict[str, Any]]:
    """TTFT, each content event's arrival (s from the request), and the usage."""
    events: list[float] = []
    usage: dict[str, Any] = {}
    client = _CLIENT.get(url) or _CLIENT.setdefault(url, httpx.Client(timeout=120))  # built once: not timed
    request = client.build_request("POST", f"{url}/v1/chat/completions", headers={"authorization": f"Bearer {KEY}",
                                   **(headers or {})}, json={**body, "stream": True,
                                   "stream_options": {"include_usage": True}})  # fmt: skip
    started = time.perf_counter()
    with contextlib.closing(client.send(request, stream=True)) as reply:
        buffer = b""
        for chunk in reply.iter_raw():
            now = time.perf_counter() - started
            buffer += chunk
            *blocks, buffer = buffer.split(b"\n\n")
            for block in blocks:
                data = block.removeprefix(b"data: ")
                if data == b"[DONE]" or not data:
                    continue
                payload = json.loads(data)
                if payload.get("usage"):
                    usage = payload["usage"]
                if any(c["delta"].get("content") for c in payload.get("choices", [])):
                    events.append(now)
    return events[0], events, usage


def lateness(events: list[float], ttft: float, rate: float) -> float:
    return statistics.median(t - (ttft + k / rate) for k, t in enumerate(events))


def proxy_and_fidelity(work: Path) -> dict[str, Any]:
    cassette = work / "paced.jsonl"
    direct, proxied = [], []
    with contextlib.ExitStack() as stack:
        upstream, _ = stack.enter_context(process("serve", "--time-scale", "1", "--seed", "1"))
        proxy, _ = stack.enter_context(process("record", "--upstream", upstream, "--cassette", str(cassette)))
        for n in range(12):
            body = {"model": MODEL, "messages": [{"role": "user", "content": f"Stream {n}"}]}
            direct.append(stream(upstream, body, PACED))
            proxied.append(stream(proxy, body, PACED))
        for n in range(5):  # long replies for the tier timing: 750 tokens, recorded at 1,000 tokens/s
            long = {"model": MODEL, "messages": [{"role": "user", "content": f"Long {n}"}]}
            stream(proxy, long, {**PACED, "x-mock-output-tokens": "750", "x-mock-tokens-per-second": "1000"})
        time.sleep(0.5)  # the last exchange is appended after its last byte
    added_ttft = statistics.median(p[0] for p in proxied) - statistics.median(d[0] for d in direct)
    added_event = statistics.median(lateness(p[1], 0.2, 100) for p in proxied) - statistics.median(
        lateness(d[1], 0.2, 100) for d in direct
    )
    everything = [json.loads(line) for line in cassette.read_text().splitlines()]
    records, long_records = everything[:12], everything[12:]
    ttft_errors, duration_errors, rates = [], [], []
    warm = records[0]["request"]["body"]
    with process("serve", "--replay", str(cassette), "--time-scale", "1", warm=warm) as (server, _):
        for record in records:
            started = time.perf_counter()
            ttft, events, _ = stream(server, record["request"]["body"])
            duration = time.perf_counter() - started
            recorded_ttft = next(e["ms"] for e in record["response"]["events"] if '"content":"' in e["data"]
                                 and '"content":""' not in e["data"]) / 1000  # fmt: skip
            ttft_errors.append(ttft / recorded_ttft - 1)
            duration_errors.append(duration / (record["response"]["duration_ms"] / 1000) - 1)
    with process("serve", "--replay", str(cassette), "--replay-timing", "tier", "--time-scale", "1", warm=warm) as (
        server,
        _,
    ):
        for record in long_records:
            long_body = {**record["request"]["body"], "service_tier": "ultrafast"}
            _, events, usage = stream(server, long_body)
            per_event = usage["completion_tokens"] / len(events)
            rates.append((usage["completion_tokens"] - per_event) / (events[-1] - events[0]))
    return {
        "proxy": {"streams": len(direct), "added_ttft_ms": round(added_ttft * 1000, 2),
                  "added_lateness_per_event_ms": round(added_event * 1000, 2),
                  "direct_ttft_ms_median": round(statistics.median(d[0] for d in direct) * 1000, 1)},
        "recorded_timing": {"streams": len(records), "ttft_error_max_pct": round(100 * max(map(abs, ttft_errors)), 2),
                            "ttft_error_median_pct": round(100 * statistics.median(map(abs, ttft_errors)), 2),
                            "duration_error_max_pct": round(100 * max(map(abs, duration_errors)), 2),
                            "duration_error_median_pct": round(100 * statistics.median(map(abs, duration_errors)), 2)},
        "tier_timing_ultrafast": {"streams": len(rates), "tokens_per_second_median": round(statistics.median(rates), 1),
                                  "error_max_pct": round(100 * max(abs(r / 750 - 1) for r in rates), 2)},
    }  # fmt: skip


def calibration(work: Path) -> dict[str, Any]:
    paced = work / "paced300.yaml"
    paced.write_text("extends: default\nprofiles:\n  default: {tokens_per_second: 300, ttft_ms: 150, jitter: 0, "
                     "tokens_per_chunk: 1, prefill_tokens_per_second: null}\n")  # fmt: skip
    cassette, fragment = work / "calibrate.jsonl", work / "calibrated.yaml"
    with process("serve", "--config", str(paced), "--time-scale", "1") as (upstream, _), process(
        "record", "--upstream", upstream, "--cassette", str(cassette)
    ) as (proxy, _):  # fmt: skip
        for n in range(8):
            stream(proxy, {"model": MODEL, "messages": [{"role": "user", "content": f"c {n}"}], "max_tokens": 300})
        time.sleep(0.5)
    subprocess.run([sys.executable, "-m", "mockserver", "calibrate", str(cassette), "--out", str(fragment)],
                   env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True, capture_output=True)  # fmt: skip
    written = yaml.safe_load(fragment.read_text())["profiles"]["default"]
    served_rates, served_ttfts = [], []
    with process("serve", "--config", str(fragment), "--time-scale", "1") as (server, _):
        for n in range(5):
            ttft, events, usage = stream(server, {"model": MODEL, "messages": [{"role": "user", "content": f"s {n}"}],
                                                  "max_tokens": 300})  # fmt: skip
            served_ttfts.append(ttft)
            served_rates.append((usage["completion_tokens"] - 1) / (events[-1] - events[0]))
    return {
        "recorded_at": {"tokens_per_second": 300, "ttft_ms": 150, "streams": 8},
        "written": {"tokens_per_second": written["tokens_per_second"], "ttft_ms": written["ttft_ms"],
                    "rate_error_pct": round(100 * abs(written["tokens_per_second"] / 300 - 1), 2),
                    "ttft_error_pct": round(100 * abs(written["ttft_ms"] / 150 - 1), 2)},
        "served": {"tokens_per_second_median": round(statistics.median(served_rates), 1),
                   "ttft_ms_median": round(1000 * statistics.median(served_ttfts), 1)},
    }  # fmt: skip


def whatif(work: Path) -> dict[str, Any]:
    fast = work / "agent-fixture.yaml"
    fast.write_text("extends: default\nprofiles:\n  default: {tokens_per_second: 54, ttft_ms: 400, jitter: 0}\n")
    session = work / "agent.jsonl"
    with process("serve", "--config", str(fast), "--time-scale", "1") as (upstream, _), process(
        "record", "--upstream", upstream, "--cassette", str(session)
    ) as (proxy, _):  # fmt: skip
        history = [{"role": "user", "content": "Plan a trip to Lisbon, one step at a time."}]
        for step in range(10):
            stream(proxy, {"model": MODEL, "messages": history, "max_tokens": 40})
            history += [{"role": "assistant", "content": f"step {step}"}, {"role": "user", "content": "next?"}]
            time.sleep(0.1)  # the agent's own work
        time.sleep(0.5)
    png = RESULTS / "whatif.png"
    first = json.loads(session.read_text().splitlines()[0])["request"]["body"]
    with process("serve", "--config", str(fast), "--replay", str(session), "--replay-timing", "tier",
                 "--time-scale", "1", warm=first) as (server, _):  # fmt: skip
        done = subprocess.run(
            [sys.executable, "-m", "mockserver", "whatif", str(session), "--config", str(fast), "--tier", "default",
             "--tier", "ultrafast", "--drive", server, "--json", "--plot", str(png)],
            env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True, capture_output=True, text=True,
        )  # fmt: skip
    shutil.copy(png, ROOT / "docs" / "images" / "whatif.png")
    rows = json.loads(done.stdout)["tiers"]
    computed = {r["tier"]: r for r in rows if not r["measured"]}
    measured = {r["tier"]: r for r in rows if r["measured"]}
    return {
        "calls": 10,
        "rows": rows,
        "measured_vs_computed_pct": {
            tier: round(100 * (measured[tier]["end_to_end_s"] / computed[tier]["end_to_end_s"] - 1), 2)
            for tier in measured
        },
    }


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_per_event(work: Path) -> dict[str, Any]:
    """300 events a stream (one token each, at 30,000 tokens/s), replayed at once against generated alike."""
    cassette = work / "cpu.jsonl"
    fast = {"x-mock-tokens-per-second": "30000", "x-mock-ttft-ms": "0", "x-mock-output-tokens": "300"}
    bodies = [{"model": MODEL, "messages": [{"role": "user", "content": f"cpu {n}"}]} for n in range(40)]
    with process("serve", "--time-scale", "1") as (upstream, _), process(
        "record", "--upstream", upstream, "--cassette", str(cassette)
    ) as (proxy, _):  # fmt: skip
        for body in bodies:
            stream(proxy, body, fast)
        time.sleep(0.5)
    figures: dict[str, Any] = {}
    for name, args in (("generated", ()), ("replayed", ("--replay", str(cassette), "--replay-timing", "instant"))):
        with process("serve", "--time-scale", "1", *args, warm=bodies[0]) as (server, pid):
            before, events = cpu_seconds(pid), 0
            for body in bodies:
                events += len(stream(server, body, fast)[1])
            figures[name] = {"events": events, "cpu_us_per_event": round(1e6 * (cpu_seconds(pid) - before) / events, 2)}
    figures["ratio_replayed_to_generated"] = round(
        figures["replayed"]["cpu_us_per_event"] / figures["generated"]["cpu_us_per_event"], 2
    )
    return figures


def main() -> None:
    parser = arguments("replay", __doc__)
    args = parser.parse_args()
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        report = {
            "machine": {"cpus": os.cpu_count(), "load_average_1m_at_start": round(load[0], 2)},
            **proxy_and_fidelity(work),
            "calibrate": calibration(work),
            "whatif": whatif(work),
            "cpu_per_event": cpu_per_event(work),
        }
    write_results(results_path("replay", args), report, show=True)


if __name__ == "__main__":
    main()
