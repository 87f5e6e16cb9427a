"""Where the server reaches under the public interfaces of what runs it: uvicorn, Starlette and
FastAPI, and CPython. The rest of the server is written against ASGI and plain Python; each trick
here exists because the plain way cost too much CPU per request or per event, or could not be done
at all, and each falls back to the plain way where what it reaches for is not there.

- **Writing to uvicorn's transport** (:mod:`.transport`): ``send.__self__`` is uvicorn's request
  cycle. Through it a fault closes the TCP connection under a reply (ASGI has no "abort" message),
  and a streamed event is written straight on the transport, without an ASGI message and a coroutine
  (a fifth of the CPU per event at hundreds of streams). A reply's head is written there too, its
  headers checked at once instead of one by one as uvicorn's ``send`` does.
- **When a request arrived** (:mod:`.arrival`): the kernel's ``TCP_INFO`` on the transport's socket
  says how long the request waited before the app saw it, so its TTFT counts from its arrival.
- **FastAPI patched at run time** (:mod:`.direct_routes`, :mod:`.app_patches`): the inference routes
  skip FastAPI's own layers, router and dependency solver (a third of the CPU before a stream
  opened); the connection's means are taken before Starlette's middleware wraps ``send``; the
  OpenAPI document gets the bodies the routes parse themselves.
- **Garbage-collector pauses** (:mod:`.collector`): off while a large body is read (its objects
  would be walked for up to 120 ms at a time), during start-up's imports, around ``ast.parse`` on
  the CPython releases that need it; start-up's objects frozen out of its sight once the server is up.
- **Hand-stepped coroutines** (:mod:`.disconnect_watch`): a client leaving is watched for without a
  task per stream: on uvicorn's request cycle, one object among its message event's waiters; elsewhere
  ``receive()`` stepped in place. The stream scheduler steps its writes the same
  way (:mod:`mockserver.engine.stream_writes`); that stays in the engine, which knows nothing of HTTP.
- **Large bodies let go in pieces** (:mod:`.large_bodies`): a parsed body's long lists freed a piece
  at a time with the event loop's turns between, and the collector held off until it is planned.
  The parse in pieces itself is plain Python in the engine (:mod:`mockserver.engine.json_in_pieces`).

:mod:`.collector` imports nothing beyond the standard library: the command line and the pytest plugin
import it first. This package's ``__init__`` imports nothing.
"""
