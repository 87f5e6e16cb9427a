"""The test harness: what a test uses to steer and observe the server.

Owns fault injection (``faults/``), scripted replies (:mod:`.scripted`), the request journal
(:mod:`.journal` in memory, :mod:`.shared_journal` through Redis), key masking for what it
shows (:mod:`.masking`), and the runtime configuration document with its merge patch
(:mod:`.control`), and the Prometheus metrics of ``GET /metrics`` (:mod:`.metrics`).

May import: service, engine, config, state, errors.

Read first: :mod:`.faults.injection`, then :mod:`.scripted`.
"""
