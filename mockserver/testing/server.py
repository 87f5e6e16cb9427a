"""``MockServer``: a real server on a free port in a background thread.

For scripts, unittest and pytest::

    with MockServer(time_scale=0) as server:
        client = server.client("sk-mock-preview")          # or openai.OpenAI(base_url=server.base_url, ...)
        server.configure(faults=["once status=503"])       # same powers as PATCH /_mock/config
        client.chat.completions.create(...)
        server.requests.assert_called_once(path="/v1/chat/completions")
        server.reset()                                      # config, journal and fault counters

It binds port 0 by default, waits until uvicorn has started, and on exit asks
uvicorn to stop and joins the thread.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Coroutine, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

import uvicorn
from fastapi import FastAPI

from mockserver.api.asgi.collector import paused_for_start_up
from mockserver.config.fixture import Fixture
from mockserver.config.settings import Settings
from mockserver.harness.journal import TEST_ID_HEADER, Journal, JournalQuery
from mockserver.server.startup import NO_WEBSOCKETS
from mockserver.server_state import ServerState
from mockserver.testing.calls import Call, Calls
from mockserver.testing.patches import config_patch

if TYPE_CHECKING:
    import openai

    from mockserver.testing.thread_server import ThreadServer

DEFAULT_KEY = "sk-mock-preview"  # the built-in fixture's key with Ultrafast preview access

STARTUP_TIMEOUT_S = 10.0

T = TypeVar("T")


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
            with paused_for_start_up():  # imported here by a script that starts a server without pytest
                from mockserver.server.app import create_app

            app = create_app(self.settings, fixture=fixture)
        self.app = app
        self._server: ThreadServer | None = None
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

    # -- test powers: the same as the /_mock/ control plane, in process ---------------------

    def configure(self, patch: Mapping[str, Any] | None = None, /, **changes: Any) -> None:
        """Apply a configuration merge patch atomically, or raise the 400 it would get over HTTP.

        ``server.configure(time_scale=0, tokens_per_second={"ultrafast": 2000}, faults=["status=503"])``;
        see :func:`mockserver.testing.handle.config_patch` for the conveniences.
        """
        self.state.configure(config_patch(patch, **changes))

    def reset(self) -> None:
        """Back to the start: configuration, journal, fault counters and ids."""
        self.run(self.state.reset())

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine on the server's event loop (where its store lives) and return its result.

        ``server.run(server.state.store.usage())``. Before :meth:`start`, it runs on a new loop.
        """
        loop = self._server.loop if self._server is not None else None
        if loop is None or not loop.is_running():
            return asyncio.run(work)
        return asyncio.run_coroutine_threadsafe(work, loop).result(timeout=STARTUP_TIMEOUT_S)

    @property
    def requests(self) -> Calls:
        """The whole journal, oldest first."""
        return self.calls()

    def calls(self, test_id: str | None = None, *, include_unscoped: bool = False, since: int = 0) -> Calls:
        """The journal (one test's, with ``test_id``), after in-flight replies were recorded."""
        journal = self.state.journal
        journal.settle(test_id)
        if include_unscoped and test_id is not None:
            journal.settle(None)
        known = [a.key for a in self.state.fixture.accounts]
        query = JournalQuery(test_id=test_id, include_unscoped=include_unscoped, since=since)
        # In memory, shaped here in the caller's thread, leaving the server's loop to its streams.
        shown = journal.shown(query, known) if isinstance(journal, Journal) else self.run(journal.read(query, known))
        return Calls([Call(s.data, s.key_digest) for s in shown])

    def newest_call(self) -> int:
        """The ``seq`` of the newest journal entry: pass it as ``since`` to see only what comes next."""
        journal = self.state.journal
        return journal.last_seq if isinstance(journal, Journal) else self.run(journal.newest())

    def client(
        self, key: str = DEFAULT_KEY, *, strict: bool = False, test_id: str | None = None, **kwargs: Any
    ) -> openai.OpenAI:
        """An ``openai.OpenAI`` pointed at this server. ``strict`` sets ``_strict_response_validation``."""
        import openai

        return openai.OpenAI(**self._client_options(key, strict, test_id, kwargs))

    def async_client(
        self, key: str = DEFAULT_KEY, *, strict: bool = False, test_id: str | None = None, **kwargs: Any
    ) -> openai.AsyncOpenAI:
        import openai

        return openai.AsyncOpenAI(**self._client_options(key, strict, test_id, kwargs))

    def _client_options(self, key: str, strict: bool, test_id: str | None, kwargs: dict[str, Any]) -> dict[str, Any]:
        headers = dict(kwargs.pop("default_headers", None) or {})
        if test_id is not None:
            headers.setdefault(TEST_ID_HEADER, test_id)
        options: dict[str, Any] = {"base_url": self.base_url, "api_key": key, "default_headers": headers or None}
        if strict:
            options["_strict_response_validation"] = True
        options.update(kwargs)
        return options

    # -- lifecycle -----------------------------------------------------------------------

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
            ws=NO_WEBSOCKETS,
            lifespan="off",
        )
        from mockserver.testing.thread_server import ThreadServer

        self._server = ThreadServer(config, self.state)
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
        self._server.stop()
        self._thread.join(timeout=STARTUP_TIMEOUT_S)
        self._server = None
        self._thread = None

    def __enter__(self) -> MockServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
