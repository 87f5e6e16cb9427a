"""The test harness: what a test uses to steer and observe the server.

Owns fault injection (``faults/``), scripted replies (:mod:`.scripted`), the request journal
(:mod:`.journal` in memory, :mod:`.journal.shared` through Redis, on the list of
:mod:`mockserver.state.journal_log`), key masking for what it
shows (:mod:`.masking`), replies from recordings (``replay/``), and what the dashboard shows live: the
streams in flight, the accounts' budgets, the speed check (``live/``). The runtime configuration
and the metrics are operations, not test tooling: :mod:`mockserver.operations`.

May import: service, engine, config, state, errors.

Read first: :mod:`.faults.injection`, then :mod:`.scripted`.
"""
