"""Recording through a proxy, and what a recording tells: ``record``, ``cassette``, ``whatif``, ``calibrate``.

:mod:`.capture` turns one exchange streaming through into a cassette record; :mod:`.upstream` is
the httpx client that forwards to the real API; :mod:`.proxy` is the ASGI app of
``mockserver record``; :mod:`.recorders` keeps those a replaying server records its misses through.
:mod:`.table` prints ``cassette show``. Their command line is
:mod:`mockserver.commands`.

May import: server_state, harness, service, engine, cassettes, config, state and errors (not the API
surface, which imports this to record a replay miss).

Read first: :mod:`.capture`, then :mod:`.proxy`.
"""
