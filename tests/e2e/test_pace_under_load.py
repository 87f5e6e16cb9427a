"""Against a real server: a reply read after a long pause at the highest rate holds up no paced
stream, and an overloaded server says so (lateness histograms, the stats, one warning)."""

from __future__ import annotations

import logging
import time

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from benchmarks.load import fairness
from mockserver import MockServer
from tests.processes import ServerProcess

KEY = "sk-mock-preview"
# Generous, for a busy CI machine: the tight figure is benchmarks/load/fairness.py's (results/fairness.json).
# Before the paused reader's backlog was bounded and caught up slowly, it held paced streams up 190-280 ms
# on a quiet machine; on a busy one, the paced streams alone see gaps of up to about 100 ms.
MOST_GAP_MS = 400


def test_paced_streams_keep_going_beside_a_paused_reply_at_the_highest_rate() -> None:
    with ServerProcess("--time-scale", "1") as server:
        figures = fairness.measure(server.port)
    assert figures["big_reply_bytes"] > 30_000_000  # it was read whole
    assert figures["beside_the_big_reply"]["worst_gap_ms"] < MOST_GAP_MS, figures


def _histogram_count(metrics: str, name: str, at_least_s: float) -> float:
    """How many observations of histogram ``name`` were above ``at_least_s`` seconds."""
    for family in text_string_to_metric_families(metrics):
        if family.name == name:
            buckets = {float(s.labels["le"]): s.value for s in family.samples if s.name.endswith("_bucket")}
            total = buckets[float("inf")]
            below = max((v for le, v in buckets.items() if le < at_least_s), default=0.0)
            return total - below
    raise AssertionError(f"{name} is not in /metrics")


def test_an_overloaded_server_fills_the_lateness_histograms_and_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    headers = {"authorization": f"Bearer {KEY}", "x-mock-tokens-per-second": "200", "x-mock-ttft-ms": "0"}
    headers["x-mock-output-tokens"] = "300"
    body = {"model": "gpt-5.6-sol", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    with caplog.at_level(logging.WARNING, logger="mockserver"), MockServer(time_scale=1.0) as server:
        loop = server._server.loop  # type: ignore[union-attr]
        with httpx.Client(base_url=server.base_url, headers=headers, timeout=30) as client:
            with client.stream("POST", "/chat/completions", json=body) as reply:
                lines = reply.iter_lines()
                next(lines)
                # The loop is busy with something else for 300 ms, twice: the stream falls behind.
                for _ in range(2):
                    loop.call_soon_threadsafe(time.sleep, 0.3)
                    time.sleep(0.5)
                stats = httpx.get(f"{server.url}/_mock/stats").json()
                for _ in lines:
                    pass
            metrics = httpx.get(f"{server.url}/metrics").text
    assert stats["worst_lateness_ms"] > 100
    assert _histogram_count(metrics, "mockserver_event_lateness_seconds", 0.1) >= 1
    assert _histogram_count(metrics, "mockserver_first_token_lateness_seconds", 0.0) >= 1
    warnings = [r.getMessage() for r in caplog.records if "ran late" in r.getMessage()]
    assert len(warnings) == 1, warnings  # at most one every 10 s
    assert "--workers" in warnings[0]
