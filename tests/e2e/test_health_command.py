"""``mockserver health``: the container's HEALTHCHECK, probing the port the server actually serves."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.processes import ServerProcess, free_port


def health(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mockserver", "health", *args],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, **(env or {})},
    )


def test_health_follows_the_port_written_to_the_port_file(tmp_path: Path) -> None:
    port_file = tmp_path / "mockserver.port"
    with ServerProcess("--port-file", str(port_file)) as server:
        assert port_file.read_text().strip() == str(server.port)
        # MOCKSERVER_PORT says something else: the file, written by the server, wins.
        ok = health(env={"MOCKSERVER_PORT_FILE": str(port_file), "MOCKSERVER_PORT": str(free_port())})
        assert ok.returncode == 0, ok.stderr
        assert health("--port", str(server.port)).returncode == 0


def test_health_fails_with_one_line_when_nothing_answers() -> None:
    port = free_port()
    result = health(env={"MOCKSERVER_PORT": str(port)})
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1
    assert f"http://127.0.0.1:{port}/ready is not healthy" in result.stderr
