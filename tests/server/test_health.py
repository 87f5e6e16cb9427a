"""``mockserver health``: which port it probes, and that it loads none of the server to do it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from mockserver.config.settings import Settings
from mockserver.server import health


def test_the_flag_wins_then_the_port_file_then_the_variable_then_the_default(tmp_path: Path) -> None:
    port_file = tmp_path / "port"
    port_file.write_text("4321\n")
    assert health.port_to_probe(1234, {"MOCKSERVER_PORT_FILE": str(port_file)}) == 1234
    assert health.port_to_probe(None, {"MOCKSERVER_PORT_FILE": str(port_file), "MOCKSERVER_PORT": "9"}) == 4321
    assert health.port_to_probe(None, {"MOCKSERVER_PORT_FILE": str(tmp_path / "missing"), "MOCKSERVER_PORT": "9"}) == 9
    assert health.port_to_probe(None, {}) == Settings().port


def test_a_probe_loads_neither_the_server_nor_the_fixture_schema() -> None:
    probe = (
        "import sys; from mockserver.entry import main; status = main(['health', '--port', '1', '--timeout', '0.2']); "
        "loaded = [name for name in ('pydantic', 'uvicorn', 'fastapi', 'mockserver.cli', 'mockserver.config.fixture') "
        "if name in sys.modules]; print(status, loaded)"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == "1 []"  # nothing listens on port 1: status 1, and nothing heavy loaded
    assert "is not healthy" in result.stderr
