"""Replay: recorded exchanges as a second source of replies, beside the generated ones.

:mod:`.options` applies the replay options at start-up, and loads :mod:`.library` only when some are
in force. :mod:`.library` loads the cassettes in force (``--replay``, the fixture's ``replay:``) and finds the
recording a request matches, in order for identical requests (per test id, the order kept in the
shared counters, so several workers replay one order), or the ``no_recording`` 400 naming the
nearest. How the chosen recording is paced and shaped is the replies layer's:
:mod:`mockserver.replies.recorded` (beside the planner) and :mod:`mockserver.replies.recorded_shapes`.

May import: service, engine, cassettes, config, state, errors.

Read first: :mod:`.library`.
"""
