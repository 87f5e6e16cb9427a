"""Two server processes on one real Redis count each request exactly once, even when the Redis
client retries a call whose reply was lost, refuse a rate-limited request in one round trip, and
refuse with a 409 a configuration patch that the other's patch, landed first, made invalid.

Process ``one`` reaches Redis through :class:`~tests.redis_proxy.DroppingProxy`, which can let
Redis run a command and then drop the connection instead of its reply: the client retries once
on a fresh connection (``mockserver.state.shared``), as it would after a real network fault. It
can also hold a command back, so that the other process's call lands first.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass

import httpx
import pytest
import redis

from mockserver.state.redis import SCRIPTS
from tests.processes import ServerProcess
from tests.redis_proxy import DroppingProxy
from tests.redis_server import RedisServer

PREVIEW_KEY = "sk-mock-preview"
LOW_LIMITS_KEY = "sk-mock-low-limits"  # 3 requests per minute in the built-in fixture
CHAT = {"model": "gpt-5.6-mini", "messages": [{"role": "user", "content": "Say hi"}]}
SETTLE_S = 5.0
OPTIONS = ("--time-scale", "0", "--seed", "1")


@dataclass
class Pair:
    proxy: DroppingProxy
    one: httpx.Client  # through the proxy
    two: httpx.Client  # straight to Redis


@pytest.fixture
def pair(redis_server: RedisServer) -> Iterator[Pair]:
    with ExitStack() as stack:
        proxy = stack.enter_context(DroppingProxy(redis_server.port))
        one = stack.enter_context(ServerProcess("--state", proxy.url(), *OPTIONS))
        two = stack.enter_context(ServerProcess("--state", redis_server.url, *OPTIONS))
        clients = [stack.enter_context(httpx.Client(base_url=s.url, timeout=30)) for s in (one, two)]
        # Every script the request path runs is loaded into Redis first, so that the reply the proxy
        # drops is the one of a call Redis ran (not a NOSCRIPT answer the client would load and redo).
        for client in clients:
            assert chat(client).status_code == 200
        yield Pair(proxy, *clients)


def chat(client: httpx.Client, key: str = PREVIEW_KEY) -> httpx.Response:
    return client.post("/v1/chat/completions", json=CHAT, headers={"authorization": f"Bearer {key}"})


def requests_counted(client: httpx.Client) -> int:
    return int(client.get("/_mock/usage").json()["totals"]["requests"])


def test_a_retried_ledger_write_is_counted_once(pair: Pair) -> None:
    before = requests_counted(pair.two)
    pair.proxy.drop_reply_to(b"usage:requests")
    assert chat(pair.one).status_code == 200
    deadline = time.monotonic() + SETTLE_S
    while requests_counted(pair.two) == before and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # a second count, if there were one, would land now
    assert pair.proxy.dropped == 1, "the ledger write's reply was never lost: nothing was retried"
    assert requests_counted(pair.two) == before + 1
    assert requests_counted(pair.one) == before + 1


def test_a_retried_admission_takes_its_requests_window_once(pair: Pair) -> None:
    pair.proxy.drop_reply_to(b"window:used")
    assert chat(pair.one, LOW_LIMITS_KEY).status_code == 200
    assert pair.proxy.dropped == 1, "the admission's reply was never lost: nothing was retried"
    second = chat(pair.two, LOW_LIMITS_KEY)
    assert second.status_code == 200
    assert second.headers["x-ratelimit-remaining-requests"] == "1"  # 3 RPM: two requests taken, not three


def _sha(source: str) -> str:
    return hashlib.sha1(source.encode()).hexdigest()


class Monitor:
    """Redis's MONITOR: every command Redis runs while it watches, until :meth:`stop`."""

    END = "mockserver-test-monitor-end"

    def __init__(self, url: str) -> None:
        self._url = url
        self.commands: list[str] = []
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        with redis.Redis.from_url(self._url) as client, client.monitor() as monitor:
            self._ready.set()
            for seen in monitor.listen():
                command = str(seen["command"])
                if self.END in command:
                    return
                if seen.get("client_type") != "lua":  # what a script runs is not a round trip
                    self.commands.append(command)

    def __enter__(self) -> Monitor:
        self._thread.start()
        assert self._ready.wait(5)
        time.sleep(0.1)  # MONITOR is in force once Redis has answered it
        return self

    def __exit__(self, *exc: object) -> None:
        with redis.Redis.from_url(self._url) as client:
            client.echo(self.END)
        self._thread.join(5)


def test_a_rate_limited_request_costs_one_round_trip_to_the_store(pair: Pair, redis_server: RedisServer) -> None:
    for client in (pair.one, pair.two, pair.one):
        assert chat(client, LOW_LIMITS_KEY).status_code == 200
    store_scripts = {_sha(source): name for name, source in SCRIPTS.items()}
    with Monitor(redis_server.url) as monitor:
        refused = chat(pair.two, LOW_LIMITS_KEY)
    assert refused.status_code == 429
    assert refused.headers["x-ratelimit-remaining-requests"] == "0"
    assert refused.headers["x-ratelimit-limit-requests"] == "3"
    calls = [
        store_scripts.get(command.split()[1].strip("\"'"), command)
        for command in monitor.commands
        if (command.split()[0].strip("\"'").upper() == "EVALSHA" and command.split()[1].strip("\"'") in store_scripts)
        or any(part in command for part in ("window:", "usage:", "spend:", "pool:"))
    ]
    assert calls == ["admit"], monitor.commands


# Valid on the built-in fixture; after SPREAD, FAST is not (100 tokens/s lies outside 10 to 20).
SPREAD = {"profiles": {"default": {"tokens_per_second": 15, "tokens_per_second_min": 10, "tokens_per_second_max": 20}}}
FAST = {"profiles": {"default": {"tokens_per_second": 100, "ttft_ms": 7}}}


def test_a_patch_the_other_process_made_invalid_meanwhile_is_refused_with_409(pair: Pair) -> None:
    pair.proxy.hold(b'"ttft_ms":7')  # process one's append of FAST waits, checked but not yet in the log
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        racing = pool.submit(pair.one.patch, "/_mock/config", json=FAST)
        assert pair.proxy.holding.wait(SETTLE_S), "the patch never reached Redis"
        assert pair.two.patch("/_mock/config", json=SPREAD).status_code == 200  # lands first
        pair.proxy.release()
        refused = racing.result(timeout=30)
    assert refused.status_code == 409, refused.text
    assert refused.json()["error"]["code"] == "config_conflict"
    assert "tokens_per_second" in refused.json()["error"]["message"]
    for client in (pair.one, pair.two):  # SPREAD in force in both, nothing of FAST anywhere
        default = client.get("/_mock/config").json()["profiles"]["default"]
        assert (default["tokens_per_second"], default["tokens_per_second_min"]) == (15, 10)
        assert default["ttft_ms"] != 7
