"""Running one server: building the application, starting it, and serving until a clean stop.

- :mod:`.app`: :func:`~.app.create_app`, the FastAPI application: the API families' routes, the
  middleware and the error handlers wired onto one :class:`~mockserver.server_state.ServerState`;
  and the uvicorn server that :class:`~mockserver.testing.server.MockServer` runs in a thread;
- :mod:`.startup`: what ``mockserver serve`` does before it serves: take the address, check the
  shared state, print the summary;
- :mod:`.process`: the serving process: a clean stop on SIGTERM/SIGINT after the grace period, and
  the supervisor of ``--workers N``.

Nothing here is imported until it is used: the pytest plugin stays cheap to load.

May import: every layer below it (the HTTP surface and down); :mod:`.process` and :mod:`.startup`
may import :mod:`.app`, not the other way round.

Read first: :mod:`.app`.
"""
