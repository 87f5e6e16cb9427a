"""Shared state behind one interface: rate windows, capacity counters, quota spend, the usage
ledger and the prompt cache's entries (:mod:`.store`, :mod:`.prompt_cache`), the per-test
counters of faults and script sequences (:mod:`.counters`) and the Responses API's stored
responses (:mod:`.responses`). In memory by default (:class:`.store.MemoryStore`, :class:`.counters.MemoryCounters`,
:class:`.responses.ResponseStore`); in Redis for several workers and replicas
(:class:`.redis.RedisStore`, :class:`.shared_counters.RedisCounters`,
:class:`.shared_responses.RedisResponseStore`, :mod:`.config_log`, the
request journal's list :mod:`.journal_log`, every process's streams for the dashboard
:mod:`.live_board`, on the connection made by :mod:`.shared`).

May import: errors only (and the ``redis`` package).

Read first: :mod:`.store`, then :mod:`.redis`.
"""
