"""``GET /metrics`` of ``serve --workers 2 --state redis://...`` (a real ``redis-server``): whichever worker
answers reports the whole server, in prometheus-client's multi-process mode.

Each worker is reached on its own keep-alive connection, told apart by ``GET /_mock/stats``' ``process``.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import httpx
import pytest

from tests.operations.test_metrics import CHAT, PREVIEW, by, mixed_run, samples
from tests.processes import ServerProcess
from tests.redis_server import RedisServer

CONNECT_ATTEMPTS = 200
# A worker that dies sooner than this after it started stops the whole server (it would only die
# again); the kill below waits this long so that the supervisor replaces it instead.
WORKER_SETTLED_S = 5.5
GAUGES = ("mockserver_active_streams", "mockserver_ultrafast_slots_in_use")
# A stream that runs until the test closes it: 2,000 tokens at 20 tokens/s.
SLOW = {**PREVIEW, "x-mock-ttft-ms": "0", "x-mock-tokens-per-second": "20", "x-mock-output-tokens": "2000"}


def connections_per_worker(url: str, workers: int = 2, each: int = 2) -> dict[int, list[httpx.Client]]:
    """``each`` keep-alive connections to each of ``workers`` workers, by process id (the kernel hands
    each new connection on the shared port to one worker or another)."""
    connections: dict[int, list[httpx.Client]] = {}
    for _ in range(CONNECT_ATTEMPTS):
        if len(connections) == workers and all(len(kept) == each for kept in connections.values()):
            break
        client = httpx.Client(base_url=url, timeout=30, limits=httpx.Limits(max_connections=1))
        kept = connections.setdefault(client.get("/_mock/stats").json()["process"], [])
        if len(kept) < each:
            kept.append(client)
        else:
            client.close()
    assert len(connections) == workers, f"only {len(connections)} worker(s) ever answered"
    return connections


class Workers(NamedTuple):
    server: ServerProcess
    connections: dict[int, list[httpx.Client]]  # two to each worker, by its process id
    started_at: float  # time.monotonic() when the server was started
    temporary: Path  # the server's TMPDIR, where the supervisor makes the metrics directory


@pytest.fixture
def workers(redis_server: RedisServer, tmp_path: Path) -> Iterator[Workers]:
    started_at = time.monotonic()
    args = ("--workers", "2", "--state", redis_server.url, "--time-scale", "1")
    with ServerProcess(*args, env={"TMPDIR": str(tmp_path)}) as server:
        connections = connections_per_worker(server.url)
        try:
            yield Workers(server, connections, started_at, tmp_path)
        finally:
            for kept in connections.values():
                for client in kept:
                    client.close()
            if server.proc is not None and server.proc.poll() is None:
                # A clean stop: the supervisor stops its workers (killed, it would leave them running).
                server.signal(signal.SIGTERM)
                server.wait(30)


def live_gauges(http: httpx.Client) -> tuple[float, float]:
    found = samples(http.get("/metrics").text)
    streams, slots = (sum(value for _, value in found[name]) for name in GAUGES)
    return streams, slots


def test_any_worker_reports_the_whole_server_and_agrees_with_the_ledger(workers: Workers) -> None:
    connections = [kept[0] for kept in workers.connections.values()]
    made = sum(mixed_run(http) for http in connections)  # the same mixed run on each worker
    ledger = connections[0].get("/_mock/usage").json()

    # The pace histograms are published by each worker when it is scraped (and about once a second),
    # so a first scrape of every worker brings them all in before the figures are compared.
    for http in connections:
        http.get("/metrics")
    scraped = [samples(http.get("/metrics").text) for http in connections]
    for found in scraped:
        requests = found["mockserver_requests_total"]
        api = {route: n for route, n in by(requests, "route").items() if route.startswith("/v1/") or route == "other"}
        assert sum(api.values()) == made  # both workers' requests, whichever answered
        assert api["/v1/chat/completions"] == 12 and api["/v1/responses"] == 4
        assert by(requests, "tier")["ultrafast"] == 4
        for metric, field in (
            ("mockserver_completed_replies_total", "requests"),
            ("mockserver_input_tokens_total", "input_tokens"),
            ("mockserver_output_tokens_total", "output_tokens"),
        ):
            assert by(found[metric], "tier") == {tier: row[field] for tier, row in ledger["by_tier"].items()}, metric
        assert by(found["mockserver_faults_injected_total"], "fault") == {"status": 2.0, "error_event_after": 2.0}
        assert by(found["mockserver_achieved_tokens_per_second_count"], "tier")["ultrafast"] == 4
        assert by(found["mockserver_time_to_first_token_seconds_count"], "tier")["flex"] == 2
        # One line per gauge: the live workers' figures added up, not one line per worker.
        assert [found[name] for name in GAUGES] == [[({}, 0.0)], [({}, 0.0)]]
    first, second = scraped
    assert first == second  # the same figures, whichever worker was asked

    # The workers' files are in one directory the supervisor made for this run, and removed when it stops.
    (directory,) = workers.temporary.glob("mockserver-metrics-*")
    assert list(directory.glob("*.db"))
    workers.server.signal(signal.SIGTERM)
    assert workers.server.wait(30) == 0
    assert not list(workers.temporary.iterdir())


def test_live_gauges_add_up_the_workers_and_forget_one_killed(workers: Workers) -> None:
    server = workers.server
    (_, (http, scrape)), (victim, (doomed, scrape_doomed)) = sorted(workers.connections.items())
    body = {**CHAT, "stream": True, "service_tier": "ultrafast"}
    with (
        http.stream("POST", "/v1/chat/completions", json=body, headers=SLOW) as kept,
        doomed.stream("POST", "/v1/chat/completions", json=body, headers=SLOW) as lost,
    ):
        kept_lines, lost_lines = kept.iter_lines(), lost.iter_lines()  # kept: a dropped iterator closes
        next(kept_lines), next(lost_lines)
        assert live_gauges(scrape) == live_gauges(scrape_doomed) == (2.0, 2.0)
        counted = samples(scrape.get("/metrics").text)["mockserver_requests_total"]

        time.sleep(max(0.0, WORKER_SETTLED_S - (time.monotonic() - workers.started_at)))
        os.kill(victim, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while live_gauges(scrape) != (1.0, 1.0):
            assert time.monotonic() < deadline, f"the killed worker is still counted: {live_gauges(scrape)}"
            time.sleep(0.05)
        # Its counters stay: the requests it served happened (and the ledger has them).
        assert samples(scrape.get("/metrics").text)["mockserver_requests_total"] == counted
    deadline = time.monotonic() + 5
    while live_gauges(scrape) != (0.0, 0.0):  # the stream kept on the survivor closed with the client
        assert time.monotonic() < deadline, live_gauges(scrape)
        time.sleep(0.05)
    assert server.proc is not None and server.proc.poll() is None  # the supervisor started another worker
