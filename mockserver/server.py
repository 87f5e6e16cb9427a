"""``MockServer``: a real server on a free port in a background thread.

For scripts, unittest and pytest::

    with MockServer() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-mock-preview")

It binds port 0 by default, waits until uvicorn has started, and on exit asks
uvicorn to stop and joins the thread.
"""

from __future__ import annotations

import threading
import time
from types import TracebackType
from typing import Any

import uvicorn
from fastapi import FastAPI

from mockserver.config import Fixture, Settings
from mockserver.state import ServerState

STARTUP_TIMEOUT_S = 10.0


class MockServer:
    def __init__(
        self,
        settings: Settings | None = None,
        *,
        fixture: Fixture | None = None,
        app: FastAPI | None = None,
        **overrides: Any,
    ) -> None:
        """``overrides`` set ``Settings`` fields, e.g. ``MockServer(time_scale=0, seed=7)``."""
        base = settings or Settings(port=0)
        self.settings = base.with_overrides(**overrides)
        if app is None:
            from mockserver.app import create_app

            app = create_app(self.settings, fixture=fixture)
        self.app = app
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def state(self) -> ServerState:
        state: ServerState = self.app.state.mock
        return state

    @property
    def port(self) -> int:
        if self._server is None or not self._server.servers:
            raise RuntimeError("the server is not running; call start() first")
        return int(self._server.servers[0].sockets[0].getsockname()[1])

    @property
    def url(self) -> str:
        return f"http://{self.settings.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """What to give the SDK as ``base_url`` (or ``OPENAI_BASE_URL``)."""
        return f"{self.url}/v1"

    def start(self) -> MockServer:
        if self._thread is not None:
            return self
        config = uvicorn.Config(
            self.app,
            host=self.settings.host,
            port=self.settings.port,
            log_level="warning",
            loop="auto",
            http="auto",
            lifespan="off",
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="mockserver", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"mockserver did not start on {self.settings.host}:{self.settings.port}")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is None or self._thread is None:
            return
        self._server.should_exit = True
        self._thread.join(timeout=STARTUP_TIMEOUT_S)
        self._server = None
        self._thread = None

    def __enter__(self) -> MockServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
