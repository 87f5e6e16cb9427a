"""The ``mockserver`` command's entry point: ``health`` at once, everything else through :mod:`mockserver.cli`.

A container's HEALTHCHECK runs ``mockserver health`` every few seconds. Loading the whole command
(the fixture schema, the recording tools, pydantic) costs several times what the probe itself does,
so this module answers ``health`` with the standard library alone and loads the rest only for the
other commands.
"""

from __future__ import annotations

import sys

from mockserver.api.asgi.collector import paused_for_start_up
from mockserver.server import health


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else list(argv)
    if arguments[:1] == ["health"]:
        return health.main(arguments[1:])
    with paused_for_start_up():
        from mockserver import cli
    return cli.main(arguments)
