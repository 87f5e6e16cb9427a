"""A started server takes what start-up built out of the garbage collector's sight (``gc.freeze``),
so a full collection under load walks only what requests left, not the app's ~84,000 objects."""

from __future__ import annotations

import subprocess
import sys

from mockserver.api.asgi.collector import YOUNG_THRESHOLD

PROGRAM = r"""
import asyncio, gc, socket
import uvicorn
from mockserver.server.app import create_app
from mockserver.server.process import GracefulServer

app = create_app()
config = uvicorn.Config(app, log_level="warning")
config.load()
server = GracefulServer(config, app.state.mock)
server.lifespan = config.lifespan_class(config)  # as uvicorn's Server.serve sets it up

async def main():
    before = gc.get_freeze_count()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    await server.startup(sockets=[sock])
    print(before, gc.get_freeze_count(), len(gc.get_objects()), gc.get_threshold()[0])
    await server.shutdown(sockets=[sock])

asyncio.run(main())
"""


def test_a_started_server_freezes_what_start_up_built() -> None:
    done = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    before, frozen, tracked, young = map(int, done.stdout.split())
    assert before == 0
    assert frozen > 20_000  # the app, its schemas, Faker's word lists, the fixture
    assert tracked < frozen / 10  # what a full collection still walks: a small remainder
    assert young == YOUNG_THRESHOLD  # a burst of requests in flight sets off few young passes
