"""After ``POST /_mock/reset`` on a server sharing its state in Redis, every request is counted again:
in the usage ledger and in the rate windows. Request ids are the idempotency keys of both in Redis,
and the ``done:*`` keys outlive the reset, so an id given again after it counted nothing."""

from __future__ import annotations

import httpx

from tests.processes import ServerProcess
from tests.redis_server import RedisServer

CHAT = {"model": "gpt-5.6-mini", "messages": [{"role": "user", "content": "Say hi"}]}
LOW_LIMITS_KEY = "sk-mock-low-limits"  # 3 requests per minute in the built-in fixture


def chat(client: httpx.Client, key: str = "sk-mock-preview") -> int:
    return client.post("/v1/chat/completions", json=CHAT, headers={"authorization": f"Bearer {key}"}).status_code


def test_requests_after_a_reset_are_counted_and_limited(redis_server: RedisServer) -> None:
    with (
        ServerProcess("--state", redis_server.url, "--time-scale", "0", "--seed", "1") as server,
        httpx.Client(base_url=server.url, timeout=30) as client,
    ):
        assert [chat(client) for _ in range(3)] == [200, 200, 200]
        assert client.post("/_mock/reset").status_code == 200
        assert [chat(client) for _ in range(2)] == [200, 200]
        # Before, both were taken as retries of the requests with the same ids before the reset: 0.
        assert client.get("/_mock/usage").json()["totals"]["requests"] == 2
        assert client.post("/_mock/reset").status_code == 200
        assert [chat(client, LOW_LIMITS_KEY) for _ in range(4)] == [200, 200, 200, 429]
