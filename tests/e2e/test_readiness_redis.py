"""Readiness follows the shared state: two replicas on one real ``redis-server``. Redis stopped, both
stop being ready within 2 s (liveness stays 200, ``mockserver health`` fails); Redis started again
on the same port, with its data, both are ready again within 2 s, and the usage ledger recorded
before is whole."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Callable

import httpx

from tests.processes import ServerProcess
from tests.redis_server import RedisServer

WITHIN_S = 2.0
POLL_S = 0.05


def ready_status(server: ServerProcess) -> int:
    try:
        return httpx.get(f"{server.url}/ready", timeout=1.5).status_code
    except httpx.TransportError:
        return 0


def holds_within(condition: Callable[[], bool], since: float, limit: float = WITHIN_S) -> None:
    """Poll ``condition`` until it holds; fail if that is not within ``limit`` seconds of ``since``."""
    while not condition():
        assert time.monotonic() - since < limit, f"not within {limit} s"
        time.sleep(POLL_S)


def health_command(server: ServerProcess, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "mockserver", "health", "--port", str(server.port), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=30)


def ledger(server: ServerProcess) -> dict[str, int]:
    totals = httpx.get(f"{server.url}/_mock/usage", timeout=5).json()["totals"]
    return {"requests": totals["requests"], "output_tokens": totals["output_tokens"]}


def test_readiness_fails_while_redis_is_stopped_and_returns_with_it() -> None:
    with RedisServer(persist=True) as redis, contextlib.ExitStack() as stack:
        one, two = ServerProcess("--state", redis.url), ServerProcess("--state", redis.url)
        for server in (one, two):
            stack.callback(server.__exit__, None, None, None)
            server.launch()
        for server in (one, two):  # started side by side
            server.answering()
        for server in (one, two):
            reply = httpx.post(
                f"{server.base_url}/chat/completions",
                headers={"authorization": "Bearer sk-mock-preview"},
                json={"model": "gpt-5.6-mini", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 8},
                timeout=10,
            )
            assert reply.status_code == 200, reply.text
        before = ledger(one)
        assert before["requests"] == 2 and ledger(two) == before
        assert [ready_status(s) for s in (one, two)] == [200, 200]
        assert health_command(one).returncode == 0

        redis.stop()
        stopped = time.monotonic()
        for server in (one, two):
            holds_within(lambda server=server: ready_status(server) == 503, stopped)
        reply = httpx.get(f"{one.url}/ready", timeout=2)
        assert reply.json()["status"] == "unavailable" and f"127.0.0.1:{redis.port}" in reply.json()["reason"]
        assert httpx.get(f"{two.url}/health").status_code == 200  # liveness stays as it is
        probe = health_command(two)
        assert probe.returncode == 1 and "status 503" in probe.stderr and "Redis at" in probe.stderr
        assert health_command(two, "--live").returncode == 0

        redis.start()
        back = time.monotonic()
        for server in (one, two):
            holds_within(lambda server=server: ready_status(server) == 200, back)
        assert health_command(one).returncode == 0
        assert ledger(one) == before and ledger(two) == before  # nothing lost while Redis was away
