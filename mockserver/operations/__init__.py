"""Operating a running server: what it reports and how it is reconfigured while it runs.

Owns the Prometheus metrics of ``GET /metrics`` (:mod:`.metrics`), and the runtime configuration
document of ``GET`` / ``PATCH /_mock/config`` with its merge patch (:mod:`.configuration`). These
serve whoever runs the server (a dashboard, a deployment, a test's set-up alike), which is why they
sit apart from the test harness below them.

May import: harness, service, engine, config, state, errors.

Read first: :mod:`.configuration`, then :mod:`.metrics`.
"""
