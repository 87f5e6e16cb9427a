"""``mockserver health``: exit 0 if the local server is ready (``GET /ready`` answers 200), 1 otherwise.

Readiness follows the shared state: with ``--state redis://...`` and Redis unreachable, the server
is not ready (every API request would get a 503), so a container's health check takes it out of
rotation, and puts it back once Redis answers again. ``--live`` probes liveness (``GET /health``)
instead, which answers 200 whenever the process serves HTTP.

A container's HEALTHCHECK runs this every few seconds, so it loads only the standard library and
:mod:`mockserver.config.environment`, not the server (``python -X importtime -m mockserver health``
shows what it loads).

The port probed is ``--port``, else the one ``serve --port-file`` wrote to ``MOCKSERVER_PORT_FILE``,
else ``MOCKSERVER_PORT``, else the default port.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from mockserver.config.environment import DEFAULT_PORT, ENV_PREFIX

if TYPE_CHECKING:
    import urllib.error

DEFAULT_TIMEOUT_S = 2.0
READY_PATH = "/ready"
LIVE_PATH = "/health"
DESCRIPTION = (
    "Probe readiness, http://127.0.0.1:PORT/ready, and exit 0 if it answers 200, 1 otherwise (not ready "
    "while the shared state, --state redis://..., is unreachable). The port is --port, else the one in "
    "MOCKSERVER_PORT_FILE (written by `serve --port-file`), else MOCKSERVER_PORT."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=None, help="port to probe")
    parser.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="SECONDS", help="how long to wait for the answer"
    )
    parser.add_argument(
        "--live", action="store_true", help="probe liveness (/health: the process serves HTTP) instead of readiness"
    )


def main(argv: list[str]) -> int:
    """``mockserver health [--port PORT] [--timeout SECONDS]``."""
    parser = argparse.ArgumentParser(prog="mockserver health", description=DESCRIPTION)
    add_arguments(parser)
    args = parser.parse_args(argv)
    return probe_health(port_to_probe(args.port), args.timeout, LIVE_PATH if args.live else READY_PATH)


def port_to_probe(port: int | None, environ: Mapping[str, str] = os.environ) -> int:
    """The port to probe: the flag, else the port file's, else ``MOCKSERVER_PORT``, else the default."""
    if port:
        return port
    port_file = environ.get(ENV_PREFIX + "PORT_FILE")
    if port_file:
        try:
            return int(Path(port_file).read_text().strip())
        except (OSError, ValueError):
            pass
    try:
        return int(environ.get(ENV_PREFIX + "PORT", DEFAULT_PORT))
    except ValueError:
        return DEFAULT_PORT


def probe_health(port: int, timeout: float, path: str = READY_PATH) -> int:
    """0 if ``GET path`` (readiness, else liveness) on the local port answers 200, else 1 (with one line why)."""
    import urllib.error
    import urllib.request  # here: every command imports this module, and only a probe sends a request

    url = f"http://127.0.0.1:{port}{path}"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as reply:
            if reply.status == 200:
                return 0
            problem = f"status {reply.status}"
    except urllib.error.HTTPError as exc:  # 503 from /ready: the reason is in the body
        problem = f"status {exc.code}: {_reason(exc)}"
    except (urllib.error.URLError, OSError) as exc:
        problem = str(getattr(exc, "reason", exc))
    print(f"mockserver: {url} is not healthy: {problem}", file=sys.stderr)
    return 1


def _reason(reply: urllib.error.HTTPError) -> str:
    """The ``reason`` a 503 from ``/ready`` gives, else its body's first line."""
    try:
        text = reply.read(4096).decode("utf-8", "replace")
    except OSError:
        return reply.reason
    try:
        return str(json.loads(text).get("reason") or text)
    except (ValueError, AttributeError):
        return text.splitlines()[0] if text else str(reply.reason)
