"""``GET /metrics``: Prometheus text that prometheus_client's own parser reads; counters that agree with the ledger."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from mockserver import MockServer

PREVIEW = {"authorization": "Bearer sk-mock-preview"}
STANDARD = {"authorization": "Bearer sk-mock-standard"}
# Real time, but quick: a short first token and a fast rate for each request.
QUICK = {"x-mock-ttft-ms": "20", "x-mock-tokens-per-second": "2000", "x-mock-output-tokens": "60"}
CHAT = {"model": "gpt-5.6-sol", "messages": [{"role": "user", "content": "Say something."}]}


def samples(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    """Every sample by name, from the Prometheus text format, parsed by prometheus_client."""
    found: dict[str, list[tuple[dict[str, str], float]]] = defaultdict(list)
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[sample.name].append((dict(sample.labels), sample.value))
    return found


def by(rows: list[tuple[dict[str, str], float]], label: str) -> dict[str, float]:
    totals: dict[str, float] = defaultdict(float)
    for labels, value in rows:
        totals[labels[label]] += value
    return dict(totals)


def mixed_run(http: httpx.Client) -> int:
    """Streams and whole replies on four tiers and both APIs, refusals, faults. Returns the requests made."""
    calls: list[tuple[str, str, dict[str, Any], dict[str, str]]] = [
        ("POST", "/v1/chat/completions", CHAT, {**STANDARD, **QUICK}),
        ("POST", "/v1/chat/completions", {**CHAT, "stream": True, "service_tier": "ultrafast"}, {**PREVIEW, **QUICK}),
        ("POST", "/v1/chat/completions", {**CHAT, "stream": True, "service_tier": "ultrafast"}, {**PREVIEW, **QUICK}),
        ("POST", "/v1/responses", {"model": "gpt-5.6-sol", "input": "hi", "service_tier": "priority"},
         {**PREVIEW, **QUICK}),
        ("POST", "/v1/responses", {"model": "gpt-5.6-sol", "input": "hi", "stream": True, "service_tier": "flex"},
         {**PREVIEW, **QUICK}),
        ("POST", "/v1/chat/completions", CHAT, {"authorization": "Bearer sk-not-a-key"}),
        ("POST", "/v1/chat/completions", {**CHAT, "stream": True}, {**PREVIEW, **QUICK, "x-mock-fault": "status=503"}),
        ("POST", "/v1/chat/completions", {**CHAT, "stream": True},
         {**PREVIEW, **QUICK, "x-mock-fault": "error_event_after=2"}),
        ("GET", "/v1/no-such-route", {}, PREVIEW),
        ("GET", "/v1/responses/resp_missing", {}, PREVIEW),
    ]  # fmt: skip
    for method, path, body, headers in calls:
        http.request(method, path, json=body or None, headers=headers).read()
    return len(calls)


def test_metrics_parse_and_match_the_ledger_after_a_mixed_run() -> None:
    with MockServer(time_scale=1) as server, httpx.Client(base_url=server.url, timeout=30) as http:
        made = mixed_run(http)
        reply = http.get("/metrics")
        assert reply.status_code == 200
        assert reply.headers["content-type"].startswith("text/plain; version=")
        found = samples(reply.text)
        ledger = http.get("/_mock/usage").json()

    requests = found["mockserver_requests_total"]
    assert sum(value for _, value in requests) == made  # /metrics itself is not counted
    routes = by(requests, "route")
    assert routes["/v1/chat/completions"] == 6
    assert routes["/v1/responses"] == 2
    assert routes["/v1/responses/{response_id}"] == 1
    assert routes["other"] == 1  # an unknown path is one label, whatever it was
    statuses = by(requests, "status")
    assert statuses["401"] == 1 and statuses["503"] == 1 and statuses["404"] == 2
    assert by(requests, "tier")["ultrafast"] == 2

    # Completed replies and their tokens, by tier, are exactly the ledger's.
    for metric, field in (
        ("mockserver_completed_replies_total", "requests"),
        ("mockserver_input_tokens_total", "input_tokens"),
        ("mockserver_output_tokens_total", "output_tokens"),
    ):
        assert by(found[metric], "tier") == {tier: row[field] for tier, row in ledger["by_tier"].items()}, metric
    assert set(ledger["by_tier"]) == {"default", "ultrafast", "priority", "flex"}

    assert by(found["mockserver_faults_injected_total"], "fault") == {"status": 1.0, "error_event_after": 1.0}

    # Histograms: the three streams that reached a token (two Ultrafast, one flex, plus the faulted
    # one, which sent two tokens) have a TTFT; the complete ones an achieved rate near 2000 tokens/s.
    ttft_count = by(found["mockserver_time_to_first_token_seconds_count"], "tier")
    assert ttft_count["ultrafast"] == 2 and ttft_count["flex"] == 1
    ttft_sum = by(found["mockserver_time_to_first_token_seconds_sum"], "tier")
    assert 0.02 <= ttft_sum["ultrafast"] / 2 < 1.0
    rate_count = by(found["mockserver_achieved_tokens_per_second_count"], "tier")
    rate_sum = by(found["mockserver_achieved_tokens_per_second_sum"], "tier")
    assert rate_count["ultrafast"] == 2
    assert 500 < rate_sum["ultrafast"] / 2 < 5000

    assert found["mockserver_active_streams"] == [({}, 0.0)]
    assert found["mockserver_ultrafast_slots_in_use"] == [({}, 0.0)]


def test_gauges_show_streams_and_slots_in_flight() -> None:
    slow = {**PREVIEW, "x-mock-ttft-ms": "0", "x-mock-tokens-per-second": "20", "x-mock-output-tokens": "2000"}
    with MockServer(time_scale=1) as server, httpx.Client(base_url=server.url, timeout=30) as http:
        body = {**CHAT, "stream": True, "service_tier": "ultrafast"}
        with http.stream("POST", "/v1/chat/completions", json=body, headers=slow) as stream:
            lines = stream.iter_lines()  # kept: a dropped iterator closes the stream
            next(lines)
            found = samples(http.get("/metrics").text)
            assert found["mockserver_active_streams"] == [({}, 1.0)]
            assert found["mockserver_ultrafast_slots_in_use"] == [({}, 1.0)]
