"""Replay public projects' VCR cassette folders and check every recorded reply comes back as recorded.

For each folder: start ``mockserver serve --replay FOLDER`` (no other flag but the port and a time
scale, so the replay is paced at the tier's speed, scaled down), read the folder as the server does
(:func:`mockserver.cassettes.vcr.read_vcr`), send every served interaction's recorded request again
through the official SDK (``openai`` for OpenAI's paths, ``anthropic`` for Messages), in the
recorded order, and compare: a whole reply's JSON with the recorded JSON (``service_tier``, which a
tier-paced replay sets to the tier served, aside), a stream's events with the recorded events, in
order. Writes counts per folder and endpoint to ``benchmarks/results/vcr_folders.json``.

    python -m benchmarks vcr_folders NAME=FOLDER [NAME=FOLDER ...]
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai

from benchmarks.harness import arguments, results_path, write_results
from mockserver.cassettes.vcr import VcrInteraction, read_vcr, sse_events

KEY = "sk-mock-standard"
TIME_SCALE = "0.001"
_TIER_FIELDS = ("service_tier",)


def serve(folder: str) -> tuple[subprocess.Popen[bytes], str, str]:
    port_file = tempfile.mktemp()
    log = tempfile.mktemp()
    process = subprocess.Popen(
        [sys.executable, "-m", "mockserver", "serve", "--replay", folder, "--port", "0", "--port-file", port_file,
         "--time-scale", TIME_SCALE],
        stdout=subprocess.DEVNULL,
        stderr=open(log, "wb"),  # noqa: SIM115 - kept open for the child
    )  # fmt: skip
    for _ in range(600):
        if os.path.exists(port_file) and Path(port_file).read_text():
            return process, f"http://127.0.0.1:{Path(port_file).read_text().strip()}", log
        time.sleep(0.1)
    process.kill()
    raise SystemExit(f"the server did not start: {Path(log).read_text()[-2000:]}")


def _stripped(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _stripped(v) for k, v in value.items() if k not in _TIER_FIELDS}
    if isinstance(value, list):
        return [_stripped(v) for v in value]
    return value


def _event_payloads(events: list[tuple[str | None, str]]) -> list[tuple[str | None, Any]]:
    out = []
    for name, data in events:
        try:
            out.append((name, _stripped(json.loads(data))))
        except ValueError:
            out.append((name, data))
    return out


def send(base: str, item: VcrInteraction) -> tuple[int, bytes]:
    body = item.request_json
    streamed = item.sse_events is not None
    if item.path.startswith("/v1/messages"):
        client: Any = anthropic.Anthropic(base_url=base, api_key=KEY, max_retries=0)
    else:
        client = openai.OpenAI(base_url=f"{base}/v1", api_key=KEY, max_retries=0)
    path = item.path.removeprefix("/v1") if isinstance(client, openai.OpenAI) else item.path
    try:
        response = client.post(path, cast_to=httpx2.Response, body=body, stream=streamed)
        return response.status_code, response.read()
    except (openai.APIStatusError, anthropic.APIStatusError) as exc:
        return exc.status_code, exc.response.content


def check(base: str, item: VcrInteraction) -> str | None:
    """None when the reply is the recorded one, else what differs."""
    status, content = send(base, item)
    if status != item.status:
        return f"status {status} (recorded {item.status}): {content[:200]!r}"
    if item.sse_events is not None:
        got, want = _event_payloads(sse_events(content)), _event_payloads(item.sse_events)
        if got != want:
            first = next(
                (i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), min(len(got), len(want))
            )
            return f"stream differs at event {first} of {len(want)} (got {len(got)})"
        return None
    if status >= 400:  # an error's ids are this server's own: its type and message are compared
        return None if _error(json.loads(content)) == _error(item.response_json) else "the error differs"
    if _stripped(json.loads(content)) != _stripped(item.response_json):
        return "the JSON differs"
    return None


def _error(body: Any) -> Any:
    error = body.get("error") if isinstance(body, dict) else None
    return (error.get("type"), error.get("message")) if isinstance(error, dict) else body


def run(name: str, folder: str) -> dict[str, Any]:
    loaded = read_vcr([folder])
    process, base, log = serve(folder)
    try:
        per_endpoint: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
        failures = []
        for item in loaded.interactions:
            endpoint = f"{item.path} {'stream' if item.sse_events is not None else 'whole'}"
            problem = check(base, item)
            per_endpoint[endpoint]["sent"] += 1
            per_endpoint[endpoint]["same" if problem is None else "different"] += 1
            if problem is not None:
                failures.append({"source": item.source, "problem": problem})
    finally:
        process.terminate()
        process.wait(10)
    listed = sum(1 for line in Path(log).read_text().splitlines() if "replay: skipped" in line)
    reasons = collections.Counter(s.reason.rsplit(": ", 1)[-1] for s in loaded.skipped)
    return {
        "project": name,
        "folder": folder,
        "served": len(loaded.interactions),
        "skipped": len(loaded.skipped),
        "skipped_listed_at_start_up": listed,
        "skipped_by_reason": dict(reasons.most_common()),
        "endpoints": {k: dict(v) for k, v in sorted(per_endpoint.items())},
        "failures": failures,
    }


def main() -> None:
    parser = arguments("vcr_folders", __doc__)
    parser.add_argument("folders", nargs="+", metavar="NAME=FOLDER", help="a project's name and its cassette folder")
    args = parser.parse_args()
    results = [run(*arg.split("=", 1)) for arg in args.folders]
    write_results(
        results_path("vcr_folders", args), {"time_scale": float(TIME_SCALE), "projects": results}, stamp=False
    )
    for result in results:
        print(f"{result['project']}: {result['served']} served, {result['skipped']} skipped "
              f"({result['skipped_listed_at_start_up']} listed at start-up)")  # fmt: skip
        for endpoint, counts in result["endpoints"].items():
            print(f"  {endpoint}: {counts}")
        for failure in result["failures"][:15]:
            print(f"  DIFFERENT {failure['source']}: {failure['problem']}")


if __name__ == "__main__":
    main()
