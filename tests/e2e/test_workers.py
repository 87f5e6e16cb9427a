"""Several processes behaving as one server over a real Redis: two workers of one ``serve --workers 2``,
and two separate ``serve`` processes (replicas), each pointed at the same ``redis-server``.

Every check runs against both set-ups. A worker is told apart by ``GET /_mock/stats``' ``process``
field: each check holds one keep-alive connection per process and knows which process answers on
it, so "seen by both" means it."""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx
import pytest

from mockserver.server.process import EARLY_DEATH_S
from tests.conftest import WORKERS_STATE_VARIABLE
from tests.processes import ServerProcess
from tests.redis_server import RedisServer

PREVIEW_KEY = "sk-mock-preview"
LOW_LIMITS_KEY = "sk-mock-low-limits"  # 3 requests per minute in the built-in fixture
CONNECT_ATTEMPTS = 200
CHAT = {"model": "gpt-5.6-mini", "messages": [{"role": "user", "content": "Say hi"}]}


@dataclass
class Cluster:
    """The processes of one set-up, and a connection to each (``connections[pid]``)."""

    servers: list[ServerProcess]
    connections: dict[int, httpx.Client] = field(default_factory=dict)

    def connect(self, count: int = 2) -> list[httpx.Client]:
        """One open connection to each of ``count`` different processes (workers share one port, and
        the kernel hands each new connection to one of them)."""
        for attempt in range(CONNECT_ATTEMPTS):
            if len(self.connections) >= count:
                break
            url = self.servers[attempt % len(self.servers)].url
            client = httpx.Client(base_url=url, timeout=30, limits=httpx.Limits(max_connections=1))
            pid = client.get("/_mock/stats").json()["process"]
            if pid in self.connections:
                client.close()
            else:
                self.connections[pid] = client
        assert len(self.connections) >= count, f"only {len(self.connections)} process(es) ever answered"
        return list(self.connections.values())[:count]

    def close(self) -> None:
        for client in self.connections.values():
            client.close()


@pytest.fixture(scope="module", params=["two workers", "two processes"])
def running(request: pytest.FixtureRequest, redis_session: RedisServer) -> Iterator[Cluster]:
    """The set-up, started once for this module's tests."""
    shared = ["--state", redis_session.url, "--time-scale", "0", "--seed", "1"]
    if request.param == "two workers":
        servers = [ServerProcess("--workers", "2", *shared)]
    else:
        servers = [ServerProcess(*shared), ServerProcess(*shared)]
    with contextlib.ExitStack() as stack:
        for server in servers:
            stack.enter_context(server)
        cluster = Cluster(servers)
        stack.callback(cluster.close)
        yield cluster


@pytest.fixture
def cluster(running: Cluster, redis_server: RedisServer) -> Cluster:
    """The set-up with Redis emptied: every process takes its initial configuration back before its
    next request (the shared configuration's epoch moved), with empty windows, ledger and slots."""
    return running


def chat(client: httpx.Client, key: str = PREVIEW_KEY, **body: object) -> httpx.Response:
    return client.post("/v1/chat/completions", json={**CHAT, **body}, headers={"authorization": f"Bearer {key}"})


def test_a_config_patch_through_one_process_is_in_force_in_both(cluster: Cluster) -> None:
    one, two = cluster.connect()
    patch = {"capacity": {"ultrafast_concurrency": 7}, "time_scale": 0.25}
    assert one.patch("/_mock/config", json=patch).status_code == 200
    for client in (one, two):
        document = client.get("/_mock/config").json()
        assert (document["capacity"]["ultrafast_concurrency"], document["time_scale"]) == (7, 0.25)
    assert two.post("/_mock/reset").status_code == 200
    for client in (one, two):
        assert client.get("/_mock/config").json()["time_scale"] == 0


def test_the_ultrafast_cap_holds_across_both_under_concurrent_load(cluster: Cluster) -> None:
    clients = cluster.connect()
    cap = 3
    clients[0].patch("/_mock/config", json={"time_scale": 1, "capacity": {"ultrafast_concurrency": cap}})
    # Ten streams at once, five through each process, each holding its slot for about 1.5 s.
    extra = [httpx.Client(base_url=c.base_url, timeout=30) for c in clients for _ in range(4)]
    try:
        senders = clients + extra
        body = {**CHAT, "model": "gpt-5.6-sol", "service_tier": "ultrafast", "stream": True}
        headers = {"authorization": f"Bearer {PREVIEW_KEY}", "x-mock-output-tokens": "1100"}

        def stream(client: httpx.Client) -> int:
            with client.stream("POST", "/v1/chat/completions", json=body, headers=headers) as reply:
                reply.read()
                return reply.status_code

        with concurrent.futures.ThreadPoolExecutor(len(senders)) as pool:
            statuses = list(pool.map(stream, senders))
    finally:
        for client in extra:
            client.close()
    assert sorted(statuses) == [200] * cap + [429] * (len(senders) - cap)
    capacity = clients[1].get("/_mock/usage").json()["capacity"]
    assert (capacity["ultrafast_peak"], capacity["ultrafast_in_flight"]) == (cap, 0)


def test_a_three_rpm_key_gets_exactly_three_requests_across_both(cluster: Cluster) -> None:
    one, two = cluster.connect()
    statuses = [chat(client, LOW_LIMITS_KEY).status_code for client in (one, two, one, two, one, two)]
    assert statuses == [200, 200, 200, 429, 429, 429]
    refused = chat(one, LOW_LIMITS_KEY)
    assert refused.headers["x-ratelimit-remaining-requests"] == "0"
    assert refused.json()["error"]["code"] == "rate_limit_exceeded"


def test_both_processes_keep_one_ledger(cluster: Cluster) -> None:
    one, two = cluster.connect()
    replies = [chat(client, max_completion_tokens=20 + n).json() for n, client in enumerate((one, two, two, one))]
    for client in (one, two):
        totals = client.get("/_mock/usage").json()["totals"]
        assert totals["requests"] == 4
        assert totals["input_tokens"] == sum(r["usage"]["prompt_tokens"] for r in replies)
        assert totals["output_tokens"] == sum(r["usage"]["completion_tokens"] for r in replies)
    assert one.post("/_mock/reset").status_code == 200
    assert two.get("/_mock/usage").json()["totals"]["requests"] == 0


def test_both_processes_keep_one_journal(cluster: Cluster) -> None:
    one, two = cluster.connect()
    scope = {"x-mock-test-id": "one-journal"}
    sent = [(client, f"message {n}") for n, client in enumerate((one, two, two, one))]
    for client, text in sent:
        reply = client.post(
            "/v1/chat/completions",
            json={**CHAT, "messages": [{"role": "user", "content": text}]},
            headers={"authorization": f"Bearer {PREVIEW_KEY}", **scope},
        )
        assert reply.status_code == 200
    for client in (one, two):
        entries = client.get("/_mock/requests", headers=scope).json()["data"]
        assert [e["body"]["messages"][0]["content"] for e in entries] == [text for _, text in sent]
        assert [e["seq"] for e in entries] == sorted({e["seq"] for e in entries})  # one order, no repeats
    assert two.delete("/_mock/requests", headers=scope).json()["deleted"] == 4
    assert one.get("/_mock/requests", headers=scope).json()["data"] == []


def test_redis_lost_is_a_retryable_503_until_it_returns(cluster: Cluster, redis_server: RedisServer) -> None:
    one, two = cluster.connect()
    assert chat(one).status_code == 200
    redis_server.stop()
    for client in (one, two):
        lost = chat(client)
        assert lost.status_code == 503
        assert lost.json()["error"]["code"] == "state_unavailable"
        assert lost.headers["retry-after"] == "1"
        assert client.get("/health").status_code == 200  # the liveness probe does not depend on Redis
        claude = client.post(
            "/v1/messages",
            json={"model": "claude-opus-4.8", "max_tokens": 20, "messages": [{"role": "user", "content": "hi"}]},
            headers={"x-api-key": PREVIEW_KEY, "anthropic-version": "2023-06-01"},
        )
        assert claude.status_code == 503 and claude.json()["type"] == "error"  # Anthropic's shape, not a 500
    redis_server.start()
    for client in (one, two):
        assert chat(client).status_code == 200
    assert json.loads(two.get("/_mock/usage").text)["totals"]["requests"] == 2  # Redis came back empty


def test_redis_refusing_writes_is_the_same_retryable_503(cluster: Cluster, redis_server: RedisServer) -> None:
    """Redis answering but refusing (out of memory under maxmemory, a read-only replica): a 503 with
    Redis's words, no dropped connection, no hung stream; and back to normal once Redis accepts again."""
    one, two = cluster.connect()
    assert redis_server.command("CONFIG", "SET", "maxmemory", "1").startswith(b"+OK")
    try:
        for client in (one, two):
            refused = chat(client)
            assert refused.status_code == 503
            error = refused.json()["error"]
            assert error["code"] == "state_unavailable" and "refused the call" in error["message"]
            streamed = chat(client, stream=True)
            assert streamed.status_code == 503
    finally:
        redis_server.command("CONFIG", "SET", "maxmemory", "0")
    for client in (one, two):
        assert chat(client).status_code == 200
        assert chat(client, stream=True).text.rstrip().endswith("data: [DONE]")


# The official-SDK suites whose tests use the session's server only through its URL, run once more
# with that server being ``serve --workers 2`` on Redis, every request on a new connection.
SDK_SUITES = [
    "tests/e2e/test_sdk_chat.py",
    "tests/e2e/test_sdk_chat_tools.py",
    "tests/e2e/test_sdk_chat_limits.py",
    "tests/e2e/test_sdk_structured_errors.py",
    "tests/e2e/test_sdk_capacity.py",
    "tests/e2e/test_sdk_usage.py",
    "tests/e2e/test_sdk_responses.py",
    "tests/e2e/test_sdk_response_endpoints.py",
]
SDK_SUITES_TIMEOUT_S = 600
NESTED_PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                 "-W", "ignore::pytest.PytestUnraisableExceptionWarning"]  # fmt: skip


def test_the_sdk_suites_pass_against_two_workers(redis_server: RedisServer) -> None:
    result = subprocess.run(
        # A test client's socket left to the garbage collector at the very end of the nested session is
        # reported there as an error; it concerns the test clients, not the server (the outer run checks
        # these suites for leaks against the in-thread server), so it is not one here.
        [*NESTED_PYTEST, *SDK_SUITES],
        env={**os.environ, WORKERS_STATE_VARIABLE: redis_server.url},
        capture_output=True,
        text=True,
        timeout=SDK_SUITES_TIMEOUT_S,
    )
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else result.stderr
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    passed = re.search(r"(\d+) passed", summary)
    assert passed is not None and int(passed.group(1)) >= 130, summary


def stats_pid(url: str) -> int:
    with httpx.Client(base_url=url, timeout=10) as client:
        return int(client.get("/_mock/stats").json()["process"])


def test_workers_stop_cleanly_with_streams_in_flight(redis_server: RedisServer) -> None:
    """SIGTERM to ``serve --workers 2``: each worker's streams end with the shutdown event within the
    grace period, every slot is given back, and the supervisor exits 0 without a traceback."""
    with ServerProcess("--workers", "2", "--state", redis_server.url, "--shutdown-grace", "1") as server:
        cluster = Cluster([server])
        clients = cluster.connect()
        body = {**CHAT, "model": "gpt-5.6-sol", "service_tier": "ultrafast", "stream": True}
        headers = {"authorization": f"Bearer {PREVIEW_KEY}", "x-mock-output-tokens": "100000"}
        ends: list[str] = []

        def stream(client: httpx.Client) -> None:
            with client.stream("POST", "/v1/chat/completions", json=body, headers=headers) as reply:
                ends.extend(line for line in reply.iter_lines() if line)

        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            running = [pool.submit(stream, client) for client in clients]
            with httpx.Client(base_url=server.url, timeout=10) as probe:
                deadline = time.monotonic() + 10
                while probe.get("/_mock/usage").json()["capacity"]["ultrafast_in_flight"] < 2:
                    assert time.monotonic() < deadline, "the two streams did not start"
                    time.sleep(0.05)
            signalled = time.monotonic()
            server.signal(signal.SIGTERM)
            for done in running:
                done.result(timeout=10)
        ended = time.monotonic() - signalled
        assert server.wait(timeout=10) == 0
        cluster.close()
        output = server.output()
    assert ended < 1 + 1
    shutdown_events = [line for line in ends if '"server_shutting_down"' in line]
    assert len(shutdown_events) == 2  # one per stream, one stream per worker
    assert "Traceback" not in output
    assert int(redis_server.command("ZCARD", "mockserver:pool:ultrafast").split(b"\r\n")[0][1:] or 0) == 0


def test_a_worker_that_dies_is_replaced(redis_server: RedisServer) -> None:
    with ServerProcess("--workers", "2", "--state", redis_server.url) as server:
        started = time.monotonic()
        cluster = Cluster([server])
        cluster.connect()
        victim = next(iter(cluster.connections))
        # A worker dying within its first seconds is taken for a start-up failure, which stops the run.
        time.sleep(max(0.0, EARLY_DEATH_S + 0.5 - (time.monotonic() - started)))
        os.kill(victim, signal.SIGKILL)
        cluster.close()
        cluster.connections.clear()
        deadline = time.monotonic() + 30
        while True:
            try:
                cluster.connect()
                break
            except (AssertionError, httpx.TransportError):
                assert time.monotonic() < deadline, "no second worker answered after one was killed"
                cluster.close()
                cluster.connections.clear()
                time.sleep(0.2)
        assert victim not in cluster.connections and len(cluster.connections) == 2
        cluster.close()
        assert "died" in server.output()
