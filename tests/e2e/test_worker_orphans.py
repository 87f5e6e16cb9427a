"""A worker whose supervisor was killed (SIGKILL, which the supervisor cannot pass on) stops by itself
instead of serving on alone with nobody to stop it."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from tests.e2e.test_metrics_workers import connections_per_worker
from tests.processes import ServerProcess
from tests.redis_server import RedisServer

STOPPED_WITHIN_S = 10.0  # noticed at once, then the default grace period of five


def alive(pid: int) -> bool:
    """Running (a zombie waiting for its new parent to reap it counts as stopped)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_workers_stop_when_their_supervisor_is_killed(redis_server: RedisServer) -> None:
    with ServerProcess("--workers", "2", "--state", redis_server.url) as server:
        connections = connections_per_worker(server.url, each=1)
        for kept in connections.values():
            kept[0].close()
        server.signal(signal.SIGKILL)
        deadline = time.monotonic() + STOPPED_WITHIN_S
        while any(alive(pid) for pid in connections):
            assert time.monotonic() < deadline, "a worker outlived its supervisor"
            time.sleep(0.1)
        assert "The supervisor" in server.output() and "is gone; stopping worker" in server.output()
