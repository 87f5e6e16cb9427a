"""Every timing preset at its stated rate, on the real clock: achieved / stated output rate per model and tier.

Starts mockserver with every built-in preset (``MOCKSERVER_PRESETS``) in its own process
pinned to core 0, and streams one long reply from each preset's model and tier in turn,
from this process pinned to core 1, with the lean SSE client in ``sse_client.py`` (not the
SDKs). OpenAI-compatible models stream Chat Completions; Claude models stream Anthropic's
``POST /v1/messages`` (``speed: "fast"`` for fast mode).

Per stream:
- achieved rate = tokens after the first content event / (last content event - first one).
  Each event carries exactly ``tokens_per_chunk`` tokens (the reply's length is a multiple of
  it), so the count is exact without re-tokenizing; the ratio to the stated rate is the figure;
- for the GPU preset, whose requests each draw a rate from a 30-60 spread, the stated rate of
  a request is its own draw (seeded by the request's ``seed``, recomputed here with the same
  profile), and the mean of the draws is reported against the mode, 45;
- Ultrafast in Chinese: characters after the first event / time, against 550 characters/s;
- TTFT: first content event minus sending the request, against the configured TTFT.

Figures go to ``benchmarks/results/presets.json`` and a table on stdout (docs/presets.md
tables them). Exit status 1 if any stream is off by 1% or more.

    python -m benchmarks presets [--quick | --seconds S] [--output FILE]
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import sys
from dataclasses import dataclass
from typing import Any

import orjson

from benchmarks.harness import servers_under_test, stream_arguments, write_results
from benchmarks.sse_client import StreamTrace, stream
from mockserver.config import presets
from mockserver.config.fixture import load_fixture

STREAM_SECONDS = 4.0
GPU_REQUESTS = 6  # draws from the GPU spread
KEY = "sk-mock-preview"
OPENAI_TIER = {"default": None, "priority": "priority", "flex": "flex", "ultrafast": "ultrafast"}


@dataclass(frozen=True)
class Case:
    preset: str
    api: str
    model: str
    tier: str
    stated: float  # tokens/s (characters/s for the Chinese case)
    per_chunk: int
    ttft_ms: float
    seed: int = 0
    chinese: bool = False

    @property
    def label(self) -> str:
        how = self.tier
        if self.api == "anthropic":
            how = {"priority": "fast", "default": "standard"}[self.tier]
        suffix = " (Chinese, chars/s)" if self.chinese else ""
        seed = f" #{self.seed}" if self.preset == "gpu" else ""
        return f"{self.preset}: {self.model} {how}{seed}{suffix}"


def cases() -> list[Case]:
    fixture = load_fixture(presets=presets.names())
    out = []
    for name in presets.names():
        for row in presets.rows(name):
            model = fixture.model(row.model)
            assert model is not None
            profile = fixture.profile(model, row.tier)  # type: ignore[arg-type]
            seeds = range(1, GPU_REQUESTS + 1) if profile.tokens_per_second_min is not None else [1]
            for seed in seeds:
                stated = profile.rate(random.Random(seed))
                out.append(
                    Case(name, row.api, row.model, row.tier, stated, profile.tokens_per_chunk, profile.ttft_ms, seed)
                )
            if profile.chinese_characters_per_second is not None:
                out.append(
                    Case(
                        name,
                        row.api,
                        row.model,
                        row.tier,
                        profile.chinese_characters_per_second,
                        profile.tokens_per_chunk,
                        profile.ttft_ms,
                        chinese=True,
                    )
                )
    return out


def request(case: Case, seconds: float) -> tuple[str, dict[str, Any], dict[str, str], int]:
    tokens = max(50, int(case.stated * seconds))
    if case.chinese:
        tokens = int(tokens * 1.4)  # about 1.36 tokens per character
    tokens -= tokens % case.per_chunk
    headers = {"x-mock-output-tokens": str(tokens)}
    prompt = "写一篇关于速度的文章" if case.chinese else "benchmark"
    messages = [{"role": "user", "content": prompt}]
    if case.api == "anthropic":
        headers |= {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
        body: dict[str, Any] = {"model": case.model, "max_tokens": tokens, "messages": messages, "stream": True}
        if case.tier == "priority":
            body["speed"] = "fast"
        return "/v1/messages", body, headers, tokens
    headers["authorization"] = f"Bearer {KEY}"
    body = {"model": case.model, "messages": messages, "stream": True, "seed": case.seed}
    if case.tier in OPENAI_TIER and OPENAI_TIER[case.tier] is not None and not case.model.endswith("-ultrafast"):
        body["service_tier"] = OPENAI_TIER[case.tier]
    return "/v1/chat/completions", body, headers, tokens


def content_events(trace: StreamTrace) -> list[tuple[float, str]]:
    """(arrival, text) of every event that carries visible text, on either API."""
    out = []
    for when, data in trace.events:
        if data.startswith(b"[DONE]"):
            continue
        payload = orjson.loads(data)
        if payload.get("type") == "content_block_delta":
            delta = payload["delta"]
            text = delta.get("text") or delta.get("partial_json") or ""
        else:
            choices = payload.get("choices") or []
            text = (choices[0].get("delta") or {}).get("content") if choices else None
        if text:
            out.append((when, text))
    return out


async def measure(port: int, case: Case, seconds: float) -> dict[str, Any]:
    path, body, headers, tokens = request(case, seconds)
    trace = await stream("127.0.0.1", port, path, body, headers)
    if trace.status != 200:
        raise RuntimeError(f"{case.label}: HTTP {trace.status}")
    events = content_events(trace)
    (first, first_text), (last, _) = events[0], events[-1]
    if case.chinese:
        achieved = (sum(len(text) for _, text in events) - len(first_text)) / (last - first)
    else:
        achieved = (tokens - case.per_chunk) / (last - first)
    return {
        "preset": case.preset,
        "api": case.api,
        "model": case.model,
        "tier": case.tier,
        "label": case.label,
        "unit": "chars/s" if case.chinese else "tokens/s",
        "stated": case.stated,
        "achieved": achieved,
        "ratio": achieved / case.stated,
        "tokens": tokens,
        "seconds": last - first,
        "ttft_ms_configured": case.ttft_ms,
        "ttft_ms_measured": (first - trace.sent_at) * 1000,
    }


async def run_all(port: int, seconds: float) -> list[dict[str, Any]]:
    """One stream at a time: each is measured alone, as one client would see it."""
    return [await measure(port, case, seconds) for case in cases()]


def main() -> int:
    seconds, output = stream_arguments("presets", __doc__)
    seconds = seconds or STREAM_SECONDS
    os.environ["MOCKSERVER_PRESETS"] = ",".join(presets.names())
    with servers_under_test() as servers:
        rows = asyncio.run(run_all(servers["mockserver"].port, seconds))
    worst = max(abs(r["ratio"] - 1) for r in rows) * 100
    gpu = [r["stated"] for r in rows if r["preset"] == "gpu" and r["unit"] == "tokens/s"]
    for r in rows:
        print(
            f"{r['label']:<62} stated {r['stated']:8.1f} {r['unit']:<8} achieved {r['achieved']:8.1f}  "
            f"ratio {r['ratio']:.4f}  TTFT {r['ttft_ms_measured']:6.0f} ms (configured {r['ttft_ms_configured']:g})",
            flush=True,
        )
    write_results(
        output,
        {
            "benchmark": "presets",
            "command": f"python -m benchmarks presets --seconds {seconds:g}",
            "stream_seconds": seconds,
            "worst_rate_error_pct": worst,
            "within_1_pct": worst < 1.0,
            "gpu_spread_mean_of_draws": statistics.fmean(gpu) if gpu else None,
            "rows": rows,
        },
    )
    print(f"worst achieved-rate error across all presets: {worst:.3f}% -> {output}")
    return 0 if worst < 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
