"""The server's metrics in prometheus-client's counters, gauges and histograms (what they are:
:mod:`.metrics`), and their text for ``GET /metrics``.

Imported with the first exchange counted, the first scrape, or at once with several workers
(:class:`mockserver.operations.metrics.Metrics`): a server starts without prometheus-client.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TypeVar, cast

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, multiprocess
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from mockserver.engine import lateness as pace
from mockserver.service.exchange import Exchange

CONTENT_TYPE = CONTENT_TYPE_LATEST
OTHER_ROUTE = "other"
NO_TIER = "none"
TTFT_BUCKETS = (0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 8.0, 13.0, 20.0, 30.0)
# Around the tiers' rates (flex 27, standard 54, fast 135, Ultrafast 750 tokens/s) and beyond.
PREFILL_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0)
QUEUE_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0)
RATE_BUCKETS = (10.0, 20.0, 27.0, 40.0, 54.0, 80.0, 135.0, 200.0, 400.0, 600.0, 750.0, 900.0, 1500.0, 5000.0)
# How the workers' gauges add up: the sum over the workers alive now.
LIVE_SUM: Final = "livesum"


def _registry() -> CollectorRegistry:
    return CollectorRegistry(auto_describe=True)


Series = TypeVar("Series", Counter, Histogram)


class PrometheusMetrics:
    """The server's metrics in prometheus-client's series: ``registry`` holds this process's, ``exposed`` is
    what a scrape renders (the same registry in one process; every worker's files, added up, with several
    workers).

    ``active_streams`` and ``ultrafast_slots`` say the two gauges' figures now; they are read when
    scraped (one process) or when :meth:`streams_changed` and :meth:`slots_changed` are called (several
    workers). ``multiprocess_dir``: the directory
    of ``serve --workers N`` (taken from ``PROMETHEUS_MULTIPROC_DIR``), None for one process.
    """

    def __init__(
        self,
        active_streams: Callable[[], int],
        ultrafast_slots: Callable[[], int],
        lateness: pace.Lateness | None,
        multiprocess_dir: str | None,
    ) -> None:
        self.active_streams = active_streams
        self.ultrafast_slots = ultrafast_slots
        self.lateness = lateness  # the stream scheduler's, published by publish_lateness()
        self.multiprocess_dir = multiprocess_dir
        self.registry = r = _registry()
        self.exposed = r
        if self.multiprocess_dir is not None:
            self.exposed = _registry()
            # prometheus-client leaves these two functions unannotated.
            multiprocess.MultiProcessCollector(self.exposed, path=self.multiprocess_dir)  # type: ignore[no-untyped-call]
        self._define_series(r)
        # What of the scheduler's counts the histograms have: (counts, total) per histogram.
        self._published: dict[str, tuple[list[int], float]] = {}
        self._request_counters: dict[tuple[str, int | None, str], Counter] = {}
        self._tier_series: dict[tuple[int, str], Counter | Histogram] = {}
        # With several workers each gauge is a value in this worker's file, so it is set when the
        # figure changes; in one process it is read when scraped, and a change costs nothing.
        self._gauges_pushed = self.multiprocess_dir is not None
        if not self._gauges_pushed:
            self.streams_gauge.set_function(self.active_streams)
            self.slots_gauge.set_function(self.ultrafast_slots)
        self.streams_changed()
        self.slots_changed()

    def _define_series(self, r: CollectorRegistry) -> None:
        """The counters, histograms and gauges the server keeps, in registry ``r``."""
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
        self.prefill = Histogram(
            "mockserver_prefill_seconds", "Inference requests: the part of the TTFT spent reading the prompt.",
            ["tier"], buckets=PREFILL_BUCKETS, registry=r,
        )  # fmt: skip
        self.queued = Counter(
            "mockserver_capacity_queue", "Requests that waited for an Ultrafast slot, by how the wait ended.",
            ["outcome"], registry=r,
        )  # fmt: skip
        self.queue_wait = Histogram(
            "mockserver_capacity_queue_seconds", "Seconds requests waited for an Ultrafast slot, by outcome.",
            ["outcome"], buckets=QUEUE_BUCKETS, registry=r,
        )  # fmt: skip
        self.streams_gauge = Gauge(
            "mockserver_active_streams", "Streams in flight.", registry=r, multiprocess_mode=LIVE_SUM
        )
        self.slots_gauge = Gauge(
            "mockserver_ultrafast_slots_in_use", "Ultrafast capacity slots this server holds.",
            registry=r, multiprocess_mode=LIVE_SUM,
        )  # fmt: skip
        self.first_token_lateness = Histogram(
            "mockserver_first_token_lateness_seconds",
            "Streams: seconds their first token went out after its deadline (the request's arrival plus TTFT).",
            buckets=pace.BUCKETS, registry=r,
        )  # fmt: skip
        self.event_lateness = Histogram(
            "mockserver_event_lateness_seconds",
            "Writes of stream events after the first token: seconds after the deadline of their first event.",
            buckets=pace.BUCKETS, registry=r,
        )  # fmt: skip

    def streams_changed(self) -> None:
        """A stream opened or ended (called by the stream scheduler): with several workers, the gauge
        takes the figure now."""
        if self._gauges_pushed:
            self.streams_gauge.set(self.active_streams())

    def slots_changed(self) -> None:
        """An Ultrafast slot was taken or given back here (called by the store): with several workers,
        the gauge takes the figure now."""
        if self._gauges_pushed:
            self.slots_gauge.set(self.ultrafast_slots())

    def on_complete(self, exchange: Exchange) -> None:
        """Count one finished exchange (not a scrape: :meth:`mockserver.operations.metrics.Metrics.on_complete`)."""
        tier = exchange.tier or NO_TIER
        self._requests_of(exchange.route or OTHER_ROUTE, exchange.status, tier).inc()
        fault = exchange.fault
        if isinstance(fault, str):
            self.faults.labels(fault_kind(fault)).inc()
        prefill_ms = exchange.prefill_ms
        if prefill_ms is not None:
            self._of(self.prefill, tier).observe(prefill_ms / 1000)
        outcome = exchange.queue_outcome
        if isinstance(outcome, str):
            self.queued.labels(outcome).inc()
            self.queue_wait.labels(outcome).observe((exchange.queued_ms or 0.0) / 1000)
        first = exchange.first_token_at
        if exchange.stream and isinstance(first, float):
            self._of(self.ttft, tier).observe(max(0.0, first - exchange.started_at))
        usage = exchange.usage
        if not exchange.completed or usage is None or exchange.account is None or exchange.model is None:
            return
        self._of(self.completed, tier).inc()
        self._of(self.input_tokens, tier).inc(usage.input_tokens)
        self._of(self.output_tokens, tier).inc(usage.output_tokens)
        last = exchange.last_token_at
        if exchange.stream and isinstance(first, float) and isinstance(last, float) and last > first:
            self._of(self.rate, tier).observe(max(0, usage.output_tokens - 1) / (last - first))

    def _of(self, metric: Series, tier: str) -> Series:
        """``metric.labels(tier)``, looked up once per metric and tier (as :meth:`_requests_of` does, for the
        same reason); a series appears on ``/metrics`` only once something is counted in it, as before."""
        key = (id(metric), tier)
        series = self._tier_series.get(key)
        if series is None:
            series = self._tier_series[key] = metric.labels(tier)
        return cast(Series, series)

    def _requests_of(self, route: str, status: int | None, tier: str) -> Counter:
        """The request counter of one route template, status and tier. prometheus-client checks and
        looks up the labels on every ``labels()`` call; the few combinations a server sees are kept
        here instead (route templates, statuses and tiers are each a small fixed set)."""
        key = (route, status, tier)
        counter = self._request_counters.get(key)
        if counter is None:
            counter = self.requests.labels(route, str(status) if status is not None else "none", tier)
            self._request_counters[key] = counter
        return counter

    def publish_lateness(self) -> None:
        """Add what the scheduler counted since the last call to the two lateness histograms."""
        if self.lateness is None:
            return
        self._publish("first", self.lateness.first_token, self.first_token_lateness)
        self._publish("events", self.lateness.events, self.event_lateness)

    def _publish(self, key: str, counted: pace.Histogram, histogram: Histogram) -> None:
        before, total = self._published.get(key, ([0] * len(counted.counts), 0.0))
        counts = list(counted.counts)
        # prometheus-client keeps a histogram as one value per bucket (not cumulative) and a sum;
        # observe() adds 1 to the bucket an amount falls in. Here whole counts are added at once.
        buckets = histogram._buckets
        for index, (now, then) in enumerate(zip(counts, before, strict=True)):
            if now > then:
                buckets[index].inc(now - then)
        if counted.total > total:
            histogram._sum.inc(counted.total - total)
        self._published[key] = (counts, counted.total)

    def render(self) -> bytes:
        self.publish_lateness()
        return generate_latest(self.exposed)


def forget_process(pid: int, directory: str) -> None:
    """A worker exited: its live gauges stop counting (its counters and histograms stay)."""
    multiprocess.mark_process_dead(pid, directory)  # type: ignore[no-untyped-call]


def fault_kind(described: str) -> str:
    """``status=503;code=...`` -> ``status``: the fault's first field, one of a fixed set of names."""
    return described.split(";", 1)[0].split("=", 1)[0] or "none"
