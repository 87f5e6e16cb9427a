"""Servers as real processes (``python -m mockserver serve``), for tests of signals, workers and shared state."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from types import TracebackType

import httpx

START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 15.0
SECOND_SIGNAL_AFTER_S = 0.1


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServerProcess:
    """``mockserver serve`` on a free port, its output kept in a file (a pipe could fill and block it)."""

    def __init__(self, *args: str, env: dict[str, str] | None = None, port: int | None = None) -> None:
        self.port = port or free_port()
        self.args = ["serve", "--port", str(self.port), "--log-level", "warning", *args]
        self.env = {**os.environ, **(env or {})}
        self._log = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 - closed in __exit__
        self.proc: subprocess.Popen[str] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def start(self) -> ServerProcess:
        return self.launch().answering()

    def launch(self) -> ServerProcess:
        """Start the process without waiting for it: several servers then start side by side."""
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mockserver", *self.args],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=self.env,
            text=True,
        )
        return self

    def answering(self) -> ServerProcess:
        """Wait until the launched server answers ``/health``."""
        assert self.proc is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"mockserver exited with {self.proc.returncode}:\n{self.output()}")
            try:
                if httpx.get(f"{self.url}/health", timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                time.sleep(0.05)
        raise RuntimeError(f"mockserver did not answer on {self.url}:\n{self.output()}")

    def signal(self, sig: int = signal.SIGTERM) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)

    def wait(self, timeout: float) -> int:
        assert self.proc is not None
        return self.proc.wait(timeout)

    def output(self) -> str:
        self._log.flush()
        self._log.seek(0)
        return self._log.read()

    def stop(self) -> None:
        """Stop it at once, but cleanly: two SIGTERMs (the second cuts the grace period short; the workers
        of --workers N stop with it), and a kill only if it does not stop in time."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            time.sleep(SECOND_SIGNAL_AFTER_S)
            if self.proc.poll() is None:
                self.proc.terminate()
            try:
                self.proc.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
        self._log.close()
