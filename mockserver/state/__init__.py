"""Shared state behind one interface: rate windows, capacity counters, quota spend and
the usage ledger (:mod:`.store`). In memory by default.

May import: errors only.

Read first: :mod:`.store`.
"""
