"""``RecordingProxy``: ``mockserver record`` on a free port in a background thread.

::

    with RecordingProxy("https://api.openai.com", "cassettes/session.jsonl") as proxy:
        client = openai.OpenAI(base_url=proxy.base_url, api_key=REAL_KEY)
        client.chat.completions.create(...)           # forwarded, streamed back, recorded

The pytest plugin's record modes run one per test; tests record from real servers with it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType

import uvicorn

from mockserver.cassettes import files, matching
from mockserver.cassettes.files import CassetteWriter
from mockserver.cassettes.limits import DEFAULT_MAX_CASSETTE_BYTES
from mockserver.cassettes.redaction import Redactor
from mockserver.harness.replay.library import Library
from mockserver.recording.proxy import Recorder, create_proxy_app
from mockserver.recording.upstream import Upstream

STARTUP_TIMEOUT_S = 10.0


class RecordingProxy:
    def __init__(
        self,
        upstream: str,
        cassette: str | Path,
        *,
        redact: Iterable[str] = (),
        record_errors: bool = False,
        max_cassette_bytes: int = DEFAULT_MAX_CASSETTE_BYTES,
        host: str = "127.0.0.1",
        port: int = 0,
        replay_known: bool = False,
    ) -> None:
        """With ``replay_known``, a request the cassette already holds is answered from it (once per
        recording) instead of being forwarded: only what is missing is recorded (record mode ``new``)."""
        self.cassette = Path(cassette)
        known = None
        if replay_known and self.cassette.exists():
            known = Library([files.load(self.cassette)], matching.Rules())
        self.recorder = Recorder(
            Upstream(upstream),
            CassetteWriter(self.cassette, max_bytes=max_cassette_bytes),
            Redactor(redact),
            record_errors=record_errors,
            known=known,
        )
        config = uvicorn.Config(create_proxy_app(self.recorder), host=host, port=port, log_level="warning")
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.servers[0].sockets[0].getsockname()[:2]
        return f"http://{host}:{port}"

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def settle(self, timeout: float = STARTUP_TIMEOUT_S) -> None:
        """Wait until every exchange the proxy has started is in the cassette (written after its last byte)."""
        deadline = time.monotonic() + timeout
        while not self.recorder.settled():
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.recorder.in_flight} exchanges still being recorded after {timeout} s")
            time.sleep(0.005)

    def start(self) -> RecordingProxy:
        self._thread = threading.Thread(target=self._server.run, name="mockserver-record", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the recording proxy did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._thread is None:
            return
        self.settle()
        self._server.should_exit = True
        self._thread.join(timeout=STARTUP_TIMEOUT_S)
        self._thread = None

    def __enter__(self) -> RecordingProxy:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
