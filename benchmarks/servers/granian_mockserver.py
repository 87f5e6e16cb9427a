"""mockserver's app served by granian instead of uvicorn: what changing the HTTP server would buy.

``mockserver serve`` runs uvicorn. This builds the same app from a fixture file
(:func:`mockserver.server.app.create_app`) and serves it with granian's in-process server, with the
options ``granian_floor.py`` uses (one runtime thread, HTTP/1.1, uvloop), after freezing the
start-up objects out of the garbage collector as ``mockserver serve`` does.

It is a measurement, not a way to run the product: what mockserver reaches only through uvicorn
(the kernel's arrival time, direct body writes, aborting a connection) falls back to its plain ASGI
path, and a stream ends after its first write with a server error event, since the stream
scheduler steps uvicorn's ``send`` coroutine by hand and granian's ``send`` gives no coroutine.
Only what happens before a stream's first event is meaningful: ``python -m benchmarks http_servers``
measures the CPU until every reply's head is out, with a 10 s TTFT.

Usage: python benchmarks/servers/granian_mockserver.py PORT FIXTURE   (granian comes with the ``benchmarks`` extra;
the repository must be on ``PYTHONPATH``).
"""

from __future__ import annotations

import gc
import sys

import uvloop
from granian_floor import server

from mockserver.config.fixture import load_fixture
from mockserver.config.settings import Settings
from mockserver.server.app import create_app


async def main(port: int, fixture: str) -> None:
    app = create_app(Settings(log_level="warning"), fixture=load_fixture(fixture))
    running = server(app, port)
    gc.collect()
    gc.freeze()
    await running.serve()


if __name__ == "__main__":
    uvloop.run(main(int(sys.argv[1]), sys.argv[2]))
