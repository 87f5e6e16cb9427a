"""The connection to a shared Redis, for state that must be one across workers and replicas.

``--state redis://host:port/db`` (or ``MOCKSERVER_STATE``) names it. Every shared part (the
:class:`~mockserver.state.redis.RedisStore` of windows, slots and the ledger, the journal, the
configuration) uses one client from :func:`connect`, through the ``redis`` package's asyncio
client, and keeps its keys under one prefix, so one Redis can hold several independent servers
(a different prefix or database each).

While Redis is unreachable, every call raises :func:`mockserver.errors.state_unavailable`: an
OpenAI-shaped 503 with ``retry-after``, which clients retry. Nothing has to be restarted when it
returns: the client reconnects on the next call, and a script Redis forgot (a restart) is loaded
again by ``redis``'s script helper.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from mockserver import errors

if TYPE_CHECKING:
    import redis.asyncio as redis

# The redis package is imported by the functions that use it, never by importing this module: a
# server in memory mode (no --state, or --state memory) never loads the Redis client at all.

logger = logging.getLogger("mockserver")

DEFAULT_PREFIX = "mockserver:"
CONNECT_TIMEOUT_S = 1.0  # a Redis that does not answer within this is taken as gone
CALL_TIMEOUT_S = 2.0
STALE_CONNECTION_RETRIES = 1
MAX_CONNECTIONS = 32  # per process; Redis answers a script in microseconds, so a few carry a worker


def unreachable() -> tuple[type[BaseException], ...]:
    """The exceptions that mean Redis is away (transport failures), for an ``except`` clause. A
    script or data error is a bug and is not masked as one."""
    from redis import exceptions as redis_errors

    return (redis_errors.ConnectionError, redis_errors.TimeoutError, ConnectionError, TimeoutError, OSError)


@dataclass(frozen=True)
class Shared:
    """Where one server's shared state lives: a client, the URL (for messages) and the key prefix.
    Every shared part of the server is built from this one handle, on the one connection pool."""

    connection: redis.Redis
    url: str
    prefix: str = DEFAULT_PREFIX

    @classmethod
    def from_url(cls, url: str, prefix: str = DEFAULT_PREFIX) -> Shared:
        return cls(client(url), url, prefix)

    def key(self, name: str) -> str:
        return f"{self.prefix}{name}"

    def reaching(self) -> AbstractAsyncContextManager[None]:
        """:func:`reaching` for this URL."""
        return reaching(self.url)


class StateUnreachable(Exception):
    """Redis did not answer at start-up; the message is one line for the terminal."""


def is_shared(url: str | None) -> bool:
    """Whether ``--state`` names a shared store (anything but ``memory`` or nothing)."""
    return bool(url) and url != "memory"


def where(url: str) -> str:
    """The URL without its password, for messages and the start-up summary."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    if parts.username:
        host = f"{parts.username}@{host}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def client(url: str) -> redis.Redis:
    """A client for ``url``; it connects lazily, and again after Redis was lost."""
    import redis.asyncio as redis
    from redis import exceptions as redis_errors
    from redis.asyncio.retry import Retry
    from redis.backoff import NoBackoff

    # A blocking pool: past MAX_CONNECTIONS calls in flight, a call waits for a free connection
    # (the default pool raises at once, which would turn a burst of admissions into 503s).
    pool = redis.BlockingConnectionPool.from_url(
        url,
        max_connections=MAX_CONNECTIONS,
        timeout=CALL_TIMEOUT_S,
        socket_connect_timeout=CONNECT_TIMEOUT_S,
        socket_timeout=CALL_TIMEOUT_S,
        # One more try on a fresh connection: after Redis restarted, the pooled connections are dead,
        # and the first call on each would fail although Redis answers again.
        retry=Retry(NoBackoff(), STALE_CONNECTION_RETRIES),
        retry_on_error=[redis_errors.ConnectionError],
        decode_responses=False,
    )
    return redis.Redis.from_pool(pool)


async def connect(url: str) -> redis.Redis:
    """A client for ``url`` that has answered a ``PING``, or :class:`StateUnreachable`."""
    connection = client(url)
    try:
        await connection.ping()
    except unreachable() as exc:
        await connection.aclose()
        reason = str(exc).rstrip(". ")
        raise StateUnreachable(f"cannot reach Redis at {where(url)} (--state): {reason}") from None
    return connection


@asynccontextmanager
async def reaching(url: str) -> AsyncIterator[None]:
    """Turn Redis being away, or refusing a call, into the retryable 503
    (:func:`mockserver.errors.state_unavailable`)."""
    from redis import exceptions as redis_errors

    try:
        yield
    except unreachable():
        raise errors.state_unavailable(f"Redis at {where(url)}") from None
    except redis_errors.RedisError as exc:
        # Redis answered but refused: out of memory under maxmemory, a read-only replica after a
        # failover, ... The same retryable 503, with Redis's own words; logged, as an operator must act.
        logger.warning("Redis at %s refused a call: %s", where(url), exc)
        raise errors.state_unavailable(f"Redis at {where(url)}", refused=str(exc)) from None


READY_TIMEOUT_S = 0.5  # readiness waits this long for Redis' PONG: a probe must answer within its own timeout


async def unreachable_because(shared: Shared, timeout: float = READY_TIMEOUT_S) -> str | None:
    """Why Redis does not answer a ``PING`` within ``timeout`` (one line), or None when it does:
    readiness (``GET /ready``) asks this on every probe. A Redis that is stopped, refuses the
    connection or hangs is not ready; so is one that answers with an error (loading its data)."""
    from redis import exceptions as redis_errors

    away: tuple[type[BaseException], ...] = (*unreachable(), redis_errors.RedisError)
    try:
        await asyncio.wait_for(shared.connection.ping(), timeout)
    except TimeoutError:
        return f"Redis at {where(shared.url)} did not answer within {timeout:g} s"
    except away as exc:
        return f"Redis at {where(shared.url)}: {str(exc).rstrip('. ') or type(exc).__name__}"
    return None
