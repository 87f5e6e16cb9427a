"""Prometheus metrics for ``GET /metrics``, through ``prometheus-client``.

prometheus-client is the reference implementation of the text format (and of its parser,
which the tests use), so the output is what every Prometheus scraper expects.

What is counted, from each finished exchange (an ``ExchangeHooks.on_complete`` observer,
so the request path pays one dictionary lookup per label set):

- ``mockserver_requests_total{route, status, tier}``: every API request. ``route`` is the
  route's template (``/v1/responses/{response_id}``), not the raw path, and ``other`` for a
  path no route matches, so the label set stays bounded whatever clients send;
- ``mockserver_completed_replies_total{tier}``, ``mockserver_input_tokens_total{tier}`` and
  ``mockserver_output_tokens_total{tier}``: the inference replies that went out whole, as the
  usage ledger records them (the same rule, so the two always agree);
- ``mockserver_faults_injected_total{fault}``: by the fault's kind (``status``, ``drop_after``,
  ``error_event_after``, ``truncate``, ``stall``, ...), a bounded set;
- ``mockserver_time_to_first_token_seconds{tier}`` and ``mockserver_achieved_tokens_per_second{tier}``:
  histograms of streamed replies, measured on the server's clock from the request's arrival to
  its first token event, and over the token events of a complete stream.

And two gauges read when scraped: ``mockserver_active_streams`` and
``mockserver_ultrafast_slots_in_use`` (the capacity pool's slots taken).

Each server has its own registry, so several servers in one process (tests) keep apart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from mockserver.service.exchange import Exchange

CONTENT_TYPE = CONTENT_TYPE_LATEST
METRICS_PATH = "/metrics"
OTHER_ROUTE = "other"
NO_TIER = "none"
TTFT_BUCKETS = (0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 8.0, 13.0, 20.0, 30.0)
# Around the tiers' rates (flex 27, standard 54, fast 135, Ultrafast 750 tokens/s) and beyond.
RATE_BUCKETS = (10.0, 20.0, 27.0, 40.0, 54.0, 80.0, 135.0, 200.0, 400.0, 600.0, 750.0, 900.0, 1500.0, 5000.0)

# Keys an exchange's ``extra`` carries for the histograms (set by the stream as it goes out).
FIRST_TOKEN_AT = "first_token_at"
LAST_TOKEN_AT = "last_token_at"
TOKEN_EVENTS = "token_events"


@dataclass
class Metrics:
    """The server's metrics and the registry they are exposed from."""

    active_streams: Callable[[], int]
    ultrafast_slots: Callable[[], int]
    registry: CollectorRegistry = field(default_factory=lambda: CollectorRegistry(auto_describe=True))

    def __post_init__(self) -> None:
        r = self.registry
        self.requests = Counter(
            "mockserver_requests", "API requests by route template, status and tier served.",
            ["route", "status", "tier"], registry=r,
        )  # fmt: skip
        self.completed = Counter(
            "mockserver_completed_replies", "Inference replies that went out whole (what the ledger records).",
            ["tier"], registry=r,
        )  # fmt: skip
        self.input_tokens = Counter(
            "mockserver_input_tokens", "Input tokens of completed replies.", ["tier"], registry=r
        )
        self.output_tokens = Counter(
            "mockserver_output_tokens", "Output tokens emitted in completed replies.", ["tier"], registry=r
        )
        self.faults = Counter(
            "mockserver_faults_injected", "Requests served with an injected fault, by kind.", ["fault"], registry=r
        )
        self.ttft = Histogram(
            "mockserver_time_to_first_token_seconds", "Streams: seconds from the request to its first token event.",
            ["tier"], buckets=TTFT_BUCKETS, registry=r,
        )  # fmt: skip
        self.rate = Histogram(
            "mockserver_achieved_tokens_per_second", "Complete streams: output tokens per second after the first.",
            ["tier"], buckets=RATE_BUCKETS, registry=r,
        )  # fmt: skip
        Gauge("mockserver_active_streams", "Streams in flight.", registry=r).set_function(self.active_streams)
        Gauge("mockserver_ultrafast_slots_in_use", "Ultrafast capacity slots taken.", registry=r).set_function(
            self.ultrafast_slots
        )

    def on_complete(self, exchange: Exchange) -> None:
        """Count one finished exchange (an ``ExchangeHooks.on_complete`` observer)."""
        if exchange.path == METRICS_PATH:
            return
        tier = exchange.tier or NO_TIER
        status = str(exchange.status) if exchange.status is not None else "none"
        self.requests.labels(exchange.route or OTHER_ROUTE, status, tier).inc()
        fault = exchange.extra.get("fault")
        if isinstance(fault, str):
            self.faults.labels(fault_kind(fault)).inc()
        first = exchange.extra.get(FIRST_TOKEN_AT)
        if exchange.stream and isinstance(first, float):
            self.ttft.labels(tier).observe(max(0.0, first - exchange.started_at))
        usage = exchange.usage
        if not exchange.completed or usage is None or exchange.account is None or exchange.model is None:
            return
        self.completed.labels(tier).inc()
        self.input_tokens.labels(tier).inc(usage.input_tokens)
        self.output_tokens.labels(tier).inc(usage.output_tokens)
        last = exchange.extra.get(LAST_TOKEN_AT)
        if exchange.stream and isinstance(first, float) and isinstance(last, float) and last > first:
            self.rate.labels(tier).observe(max(0, usage.output_tokens - 1) / (last - first))

    def render(self) -> bytes:
        return generate_latest(self.registry)


def fault_kind(described: str) -> str:
    """``status=503;code=...`` -> ``status``: the fault's first field, one of a fixed set of names."""
    return described.split(";", 1)[0].split("=", 1)[0] or "none"
