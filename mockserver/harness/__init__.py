"""The test harness: what a test uses to steer and observe the server.

Owns fault injection (``faults/``), scripted replies (:mod:`.scripted`), the request journal
(:mod:`.journal` in memory, :mod:`.journal.shared` through Redis, on the list of
:mod:`mockserver.state.journal_log`), key masking for what it
shows (:mod:`.masking`), and replies from recordings (``replay/``). The runtime configuration
and the metrics are operations, not test tooling: :mod:`mockserver.operations`.

May import: service, engine, config, state, errors.

Read first: :mod:`.faults.injection`, then :mod:`.scripted`.
"""
