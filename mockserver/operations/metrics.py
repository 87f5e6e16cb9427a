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
  its first token event, and over the token events of a complete stream;
- ``mockserver_prefill_seconds{tier}``: the part of each inference request's planned TTFT spent
  reading its prompt (``prefill_tokens_per_second``);
- ``mockserver_capacity_queue_total{outcome}`` and ``mockserver_capacity_queue_seconds{outcome}``:
  requests that waited for an Ultrafast slot (``capacity.queue_ms``), by how the wait ended
  (``served``, ``timed_out``, ``left``, ``full``), and how long they waited.

Two histograms say how well the server keeps its promised pace (see :mod:`mockserver.engine.lateness`):
``mockserver_first_token_lateness_seconds``, how late each stream's first token went out against its
deadline (the request's arrival plus its TTFT), and ``mockserver_event_lateness_seconds``, how late
each write of later events went out against the stream's schedule. The scheduler counts them in
plain lists (a bisect per write); they are added to the histograms about once a second and when
scraped (:meth:`Metrics.publish_lateness`).

And two gauges: ``mockserver_active_streams`` and ``mockserver_ultrafast_slots_in_use`` (the
Ultrafast slots this server holds). In one process they are read when scraped; with several
workers they are set when the figure changes: the stream scheduler and the store call
:meth:`Metrics.streams_changed` and :meth:`Metrics.slots_changed` (one gauge write per stream or
slot, never per token).

Each server has its own registry, so several servers in one process (tests) keep apart. The series
are made (:mod:`.prometheus`, which imports prometheus-client) when the first exchange is counted or
the first scrape comes, so a server starts without them; with several workers, at once.

**Several workers** (``serve --workers N``): a scrape reaches one worker, yet must report the
whole server. prometheus-client's multi-process mode does that: the supervisor makes a fresh
directory for the run and names it in ``PROMETHEUS_MULTIPROC_DIR`` before the workers start (the
variable must be set before prometheus-client is imported, which a spawned worker does anew).
Each worker then writes its values to memory-mapped files there, and ``GET /metrics`` on any
worker adds up every worker's files (``MultiProcessCollector``). Counters and histograms of a
worker that died still count (its requests happened, and the ledger has them); the two gauges
are ``livesum``: only live workers' values are added, and the supervisor removes a dead worker's
(:func:`forget_process`) as soon as it sees it exit. See :func:`shared_directory`.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from mockserver.engine import lateness as pace
from mockserver.service.exchange import Exchange

if TYPE_CHECKING:
    from mockserver.operations.prometheus import PrometheusMetrics

METRICS_PATH = "/metrics"
# prometheus-client's switch to multi-process mode, read when it is first imported.
MULTIPROCESS_ENV = "PROMETHEUS_MULTIPROC_DIR"


class Metrics:
    """The server's metrics: what :class:`~mockserver.operations.prometheus.PrometheusMetrics` counts, made
    when first needed (the first exchange counted, the first scrape, a gauge pushed) rather than at start-up.

    ``active_streams`` and ``ultrafast_slots`` say the two gauges' figures now; they are read when
    scraped (one process) or when :meth:`streams_changed` and :meth:`slots_changed` are called (several
    workers). ``multiprocess_dir``: the directory of ``serve --workers N`` (taken from
    ``PROMETHEUS_MULTIPROC_DIR``), None for one process; with it, the series are made at once, so that
    each worker's gauges are in its files from its start.
    """

    def __init__(
        self,
        active_streams: Callable[[], int],
        ultrafast_slots: Callable[[], int],
        lateness: pace.Lateness | None = None,
        multiprocess_dir: str | None = None,
    ) -> None:
        self.active_streams = active_streams
        self.ultrafast_slots = ultrafast_slots
        self.lateness = lateness  # the stream scheduler's, published by publish_lateness()
        self.multiprocess_dir = multiprocess_dir or os.environ.get(MULTIPROCESS_ENV) or None
        self._series: PrometheusMetrics | None = None
        self._waiting: list[Exchange] = []  # finished before the series were made: counted when they are
        if self.multiprocess_dir is not None:
            self.series()

    def series(self) -> PrometheusMetrics:
        """The series, made on the first call (which counts the exchanges waiting for them)."""
        made = self._series
        if made is None:
            from mockserver.operations.prometheus import PrometheusMetrics

            made = self._series = PrometheusMetrics(
                self.active_streams, self.ultrafast_slots, self.lateness, self.multiprocess_dir
            )
            waiting, self._waiting = self._waiting, []
            for exchange in waiting:
                made.on_complete(exchange)
        return made

    def on_complete(self, exchange: Exchange) -> None:
        """Count one finished exchange (an ``ExchangeHooks.on_complete`` observer); a scrape is not counted.

        The first one is counted once the series are made, on the event loop's next turn: the hook runs
        before the reply's last bytes go out, and they need not wait for prometheus-client to load."""
        if exchange.path == METRICS_PATH:
            return
        series = self._series
        if series is not None:
            series.on_complete(exchange)
            return
        self._waiting.append(exchange)
        if len(self._waiting) == 1:
            try:
                asyncio.get_running_loop().call_soon(self.series)
            except RuntimeError:  # called outside an event loop
                self.series()

    @property
    def pushes_gauges(self) -> bool:
        """Whether the gauges are told each change (:meth:`streams_changed`, :meth:`slots_changed`): with
        several workers; in one process they are read when scraped, and a change needs no call."""
        return self.multiprocess_dir is not None

    def streams_changed(self) -> None:
        """A stream opened or ended (called by the stream scheduler): with several workers, the gauge
        takes the figure now (in one process it is read when scraped)."""
        if self._series is not None:
            self._series.streams_changed()

    def slots_changed(self) -> None:
        """An Ultrafast slot was taken or given back here (called by the store): with several workers,
        the gauge takes the figure now (in one process it is read when scraped)."""
        if self._series is not None:
            self._series.slots_changed()

    def publish_lateness(self) -> None:
        """Add what the scheduler counted since the last call to the two lateness histograms (until the
        series are made, the scheduler keeps counting: they take it all then)."""
        if self._series is not None:
            self._series.publish_lateness()

    @property
    def content_type(self) -> str:
        """The media type of :meth:`render`'s text."""
        from mockserver.operations.prometheus import CONTENT_TYPE

        return CONTENT_TYPE

    def render(self) -> bytes:
        """Every series in the Prometheus text format, for a scrape."""
        return self.series().render()


@contextmanager
def shared_directory() -> Iterator[str]:
    """A fresh directory for the workers' metrics, named in ``PROMETHEUS_MULTIPROC_DIR`` for the
    processes started inside the block (they inherit the environment), and removed after it.

    Fresh for each run: files left by an earlier run would be added to this one's figures. A
    value the environment already had is put back afterwards.
    """
    directory = tempfile.mkdtemp(prefix="mockserver-metrics-")
    before = os.environ.get(MULTIPROCESS_ENV)
    os.environ[MULTIPROCESS_ENV] = directory
    try:
        yield directory
    finally:
        if before is None:
            os.environ.pop(MULTIPROCESS_ENV, None)
        else:
            os.environ[MULTIPROCESS_ENV] = before
        shutil.rmtree(directory, ignore_errors=True)


def forget_process(pid: int, directory: str) -> None:
    """A worker exited: its live gauges stop counting (its counters and histograms stay)."""
    from mockserver.operations.prometheus import forget_process as forget

    forget(pid, directory)
