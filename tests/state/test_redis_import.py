"""The Redis client is loaded only by a server that uses it (``--state redis://``)."""

from __future__ import annotations

import subprocess
import sys

# Everything `mockserver serve` imports, then a server in memory mode answering a request.
IN_MEMORY = """
import sys
import httpx
import mockserver.cli, mockserver.server.process, mockserver.server.startup, mockserver.server.app
from mockserver import MockServer

with MockServer(time_scale=0) as server:
    assert httpx.get(server.url + "/health").status_code == 200
loaded = sorted(name for name in sys.modules if name.split(".")[0] in ("redis", "hiredis"))
print(" ".join(loaded))
"""


def test_a_server_in_memory_mode_never_imports_the_redis_client() -> None:
    ran = subprocess.run([sys.executable, "-c", IN_MEMORY], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "", f"imported in memory mode: {ran.stdout.strip()}"
