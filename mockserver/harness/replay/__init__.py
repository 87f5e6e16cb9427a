"""Replay: recorded exchanges as a second source of replies, beside the generated ones.

:mod:`.library` loads the cassettes in force (``--replay``, the fixture's ``replay:``) and finds the
recording a request matches, in order for identical requests (per test id, the order kept in the
shared counters, so several workers replay one order), or the ``no_recording`` 400 naming the
nearest. :mod:`.shapes` turns a recorded stream into the whole body of its API, and a recorded
body into a stream (Chat Completions), so either shape answers either request. :mod:`.plan`
paces a recording's events: as recorded, re-paced at the tier asked for, or at once.

May import: service, engine, cassettes, config, state, errors.

Read first: :mod:`.library`, then :mod:`.plan`.
"""
