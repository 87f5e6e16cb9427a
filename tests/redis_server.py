"""A real ``redis-server`` (Debian's package, which ``.ci/run`` installs) on a free port, for the tests
of shared state. Each server gets its own scratch directory and saves nothing to disk, unless made
with ``persist=True``: then every write goes to an append-only file there (fsynced at once), so a
Redis stopped and started again holds what it held, as a restarted Redis with persistence does.

Where ``redis-server`` is missing, the tests that need it are skipped, except in CI (``CI`` set),
where a missing Redis is a failure: the shared-state tests must run there.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType

import pytest

from tests.processes import free_port

START_TIMEOUT_S = 10.0


def redis_binary() -> str:
    found = shutil.which("redis-server")
    if found is None:
        message = "redis-server is not installed (Debian: apt-get install redis-server)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


class RedisServer:
    """One ``redis-server`` process on loopback. :meth:`stop` and :meth:`start` again keep the port,
    so a test can take Redis away and bring it back."""

    def __init__(self, port: int | None = None, *, persist: bool = False) -> None:
        self.port = port or free_port()
        self.persist = persist
        self._dir = tempfile.TemporaryDirectory(prefix="mockserver-redis-")
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        persistence = ["--appendonly", "yes", "--appendfsync", "always"] if self.persist else ["--appendonly", "no"]
        self.proc = subprocess.Popen(
            [redis_binary(), "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", *persistence,
             "--dir", self._dir.name, "--protected-mode", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self.answers():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start on port {self.port}")
            time.sleep(0.02)
        return self

    def answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def command(self, *args: str) -> bytes:
        """One command over a raw socket (inline protocol), for tests to look at or empty Redis."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as sock:
            sock.sendall((" ".join(args) + "\r\n").encode())
            return sock.recv(65536)

    def flush(self) -> None:
        assert self.command("FLUSHALL").startswith(b"+OK")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        self.proc = None

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
        self._dir.cleanup()


@contextmanager
def running_redis() -> Iterator[RedisServer]:
    with RedisServer() as server:
        yield server
