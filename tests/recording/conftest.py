"""Real upstreams on loopback for the recording tests: mockserver itself, and a foreign one."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from mockserver import MockServer
from mockserver.testing.recorder import RecordingProxy
from tests.recording.foreign import Foreign


class Threaded:
    """Any ASGI app served by uvicorn in a thread on a free loopback port."""

    def __init__(self, app: Any) -> None:
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.servers[0].sockets[0].getsockname()[1]}"

    def __enter__(self) -> Threaded:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture(scope="module")
def foreign() -> Iterator[tuple[Foreign, str]]:
    upstream = Foreign()
    with Threaded(upstream.app) as running:
        yield upstream, running.url


@pytest.fixture(scope="module")
def upstream() -> Iterator[MockServer]:
    """mockserver as the real API: default tiers and the Claude Opus preset, at a tenth of real time."""
    with MockServer(time_scale=0.05, seed=3, presets=["claude-opus-4.8-fast"]) as running:
        yield running


@pytest.fixture
def record(tmp_path: Path) -> Iterator[Callable[..., RecordingProxy]]:
    started: list[RecordingProxy] = []

    def start(upstream_url: str, name: str = "session.jsonl", **options: Any) -> RecordingProxy:
        proxy = RecordingProxy(upstream_url, tmp_path / name, **options).start()
        started.append(proxy)
        return proxy

    yield start
    for proxy in started:
        proxy.stop()
