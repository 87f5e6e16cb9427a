"""Shared state behind one interface: rate windows, capacity counters, quota spend and
the usage ledger (:mod:`.store`). In memory by default (:class:`.store.MemoryStore`); in
Redis for several workers and replicas (:class:`.redis.RedisStore`, on the connection made
by :mod:`.shared`).

May import: errors only (and the ``redis`` package).

Read first: :mod:`.store`, then :mod:`.redis`.
"""
