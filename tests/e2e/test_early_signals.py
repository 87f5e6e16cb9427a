"""A stop signal that comes while ``mockserver serve`` is still starting stops it cleanly: status 0,
no ``KeyboardInterrupt`` traceback, with one process or as the supervisor of ``--workers N``."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.processes import free_port
from tests.redis_server import RedisServer

# Loaded by `serve` as it imports the server (uvicorn[standard]'s file watcher), not by the
# command's own import: once it is mapped, the process is inside `serve`, before it serves.
STARTING_MARKER = "_rust_notify"
WAIT_S = 30.0


def started_serving(pid: int) -> bool:
    return STARTING_MARKER in Path(f"/proc/{pid}/maps").read_text()


def signal_while_starting(args: list[str], sig: int) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "mockserver", "serve", "--port", str(free_port()), *args]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc:
        deadline = time.monotonic() + WAIT_S
        while not started_serving(proc.pid):
            assert proc.poll() is None and time.monotonic() < deadline, "never reached its start-up"
            time.sleep(0.001)
        proc.send_signal(sig)
        output, _ = proc.communicate(timeout=WAIT_S)
        return subprocess.CompletedProcess(command, proc.returncode, output)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_while_starting_stops_one_process_cleanly(sig: int) -> None:
    ran = signal_while_starting([], sig)
    assert "Traceback" not in ran.stdout, ran.stdout
    assert ran.returncode == 0, ran.stdout


def test_a_signal_while_starting_stops_the_supervisor_cleanly(redis_server: RedisServer) -> None:
    ran = signal_while_starting(["--workers", "2", "--state", redis_server.url], signal.SIGINT)
    assert "Traceback" not in ran.stdout, ran.stdout
    assert ran.returncode == 0, ran.stdout
