"""A request with a large body holds the garbage collector's passes off until its handler is done.

From the body's parse until the request is refused or planned, a body of many thousand messages is
hundreds of thousands of objects, and each full pass of the collector would walk them all with the
event loop waiting (:mod:`mockserver.engine.collector` says why that is safe and how it is bounded).
:func:`hold_collector` takes the hold when such a body is read; :func:`let_collector_go` lets go once
the route's handler has returned its reply (before a stream starts), and the exchange's releases let
go when its reply ends, for a request refused on the way.
"""

from __future__ import annotations

from mockserver.engine.collector import COLLECTOR
from mockserver.service.exchange import Exchange

LARGE_BODY_BYTES = 1024 * 1024  # a body past this is large
_HOLD = "collector_hold"  # the exchange's extra: the hold's release


def hold_collector(exchange: Exchange) -> None:
    """Hold the collector's passes off for ``exchange``, whose body is large (once per exchange)."""
    if _HOLD not in exchange.extra:
        release = COLLECTOR.hold()
        exchange.extra[_HOLD] = release
        exchange.releases.append(release)


def let_collector_go(exchange: Exchange) -> None:
    """Let go of ``exchange``'s hold, if it has one."""
    release = exchange.extra.pop(_HOLD, None)
    if release is not None:
        release()
