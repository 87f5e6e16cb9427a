"""The request being served, reachable from the domain code without threading it through every call.

The middleware binds a :class:`RequestContext` for each HTTP request; :func:`mockserver.service.access.admit`
reads it to count the request against the shared state (rate windows, quota, capacity) and to
note what it decided on the :class:`~mockserver.service.exchange.Exchange`. Outside a request (a unit
test calling ``admit`` directly) there is no context and those stateful checks are skipped,
unless a context is passed explicitly.
"""

from __future__ import annotations

from contextvars import ContextVar, Token
from dataclasses import dataclass

from mockserver.engine.pacing import Clock
from mockserver.service.exchange import Exchange
from mockserver.state.store import Store


@dataclass(frozen=True)
class RequestContext:
    exchange: Exchange
    store: Store
    clock: Clock
    time_scale: float = 1.0  # the server's, at the request's arrival: it scales the waits refusals ask for


_current: ContextVar[RequestContext | None] = ContextVar("mockserver_request", default=None)


def current() -> RequestContext | None:
    return _current.get()


def bind(context: RequestContext) -> Token[RequestContext | None]:
    return _current.set(context)


def unbind(token: Token[RequestContext | None]) -> None:
    _current.reset(token)
