"""The headers the live API puts on every reply, beside ``x-request-id``.

==============================  ===============================================================
header                          value
==============================  ===============================================================
``openai-version``              ``2020-10-01``
``openai-processing-ms``        time from receiving the request to starting the reply, in ms
``openai-organization``         the key's organization id (only when the key is valid)
``openai-project``              the key's project id (only when the key is valid)
``x-ratelimit-limit-*``         the RPM / TPM that apply
``x-ratelimit-remaining-*``     what is left of them now
``x-ratelimit-reset-*``         time until the window is full again, as a Go duration (``1s``)
==============================  ===============================================================

The rate-limit headers describe the windows of the request's model as of its admission
(when it was counted, or refused), as the live API reports them. Replies that concern no
model (``/v1/models``, an early error) describe the key's overall windows, and a request
without a valid key gets the fixture's default limits, untouched.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Awaitable, Callable

from mockserver import errors
from mockserver.config.fixture import Fixture
from mockserver.engine.pacing import Clock
from mockserver.service import ratelimits
from mockserver.service.exchange import AddedHeaders, Exchange, HeaderHook, RawHeaders, encoded
from mockserver.state.store import Store

OPENAI_VERSION = "2020-10-01"


def openai_headers(store: Store, clock: Clock, fixture: Callable[[], Fixture]) -> HeaderHook:
    """An ``on_response_start`` hook adding the headers above, encoded (see :class:`ExchangeHooks`)."""

    def hook(exchange: Exchange) -> AddedHeaders | Awaitable[AddedHeaders]:
        if exchange.api == ANTHROPIC:
            return ()
        now = clock.now()
        raw = [_VERSION, (_PROCESSING_MS, str(max(0, round((now - exchange.started_at) * 1000))).encode())]
        account = exchange.account
        if account is not None:
            raw.append((_ORGANIZATION, account.organization.encode()))
            raw.append((_PROJECT, account.project.encode()))
        if exchange.rate_limit_headers is not None:
            # Known since admission, as for every admitted request: answered without a coroutine.
            names = _RATE_LIMIT_NAMES
            for name, value in exchange.rate_limit_headers.items():
                raw.append((names.get(name) or name.encode(), value.encode()))
            return raw
        return _with_rate_limit_headers(raw, store, now, fixture(), exchange)

    return hook


_VERSION = (b"openai-version", OPENAI_VERSION.encode())
_PROCESSING_MS = b"openai-processing-ms"
_ORGANIZATION = b"openai-organization"
_PROJECT = b"openai-project"
# The names of the x-ratelimit-* headers, encoded once: every reply gives six.
_RATE_LIMIT_NAMES = {
    name: name.encode()
    for name in (
        f"x-ratelimit-{field}-{kind}" for field in ("limit", "remaining", "reset") for kind in ("requests", "tokens")
    )
}


async def _with_rate_limit_headers(
    raw: RawHeaders, store: Store, now: float, fixture: Fixture, exchange: Exchange
) -> AddedHeaders:
    raw += encoded(await _rate_limit_headers(store, now, fixture, exchange))
    return raw


async def _rate_limit_headers(store: Store, now: float, fixture: Fixture, exchange: Exchange) -> dict[str, str]:
    """The ``x-ratelimit-*`` headers: the model's windows as of admission, else the key's, else unused."""
    if exchange.rate_limit_headers is not None:
        return exchange.rate_limit_headers
    if exchange.account is not None:
        try:
            return await ratelimits.headers(store, now, ratelimits.key_target(fixture, exchange.account))
        except errors.MockAPIError:
            return {}  # the shared store is unreachable: this reply (often that very 503) goes without them
    return ratelimits.unused_headers(ratelimits.limits_for(fixture, None, None, None))


# -- Anthropic's API ------------------------------------------------------------------------------

ANTHROPIC = "anthropic"
_GO_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(h|ms|m|s)")
_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def anthropic_headers(
    store: Store, clock: Clock, fixture: Callable[[], Fixture], wall_clock: Callable[[], float]
) -> HeaderHook:
    """An ``on_response_start`` hook for requests that speak Anthropic's API.

    ``request-id`` (which the SDKs read), ``anthropic-organization-id``, and the
    ``anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}``
    headers, ``reset`` as an RFC 3339 time. They describe the same windows as the
    ``x-ratelimit-*`` headers of OpenAI's API; one token window counts input and output together,
    so the three token families carry the same figures.
    """

    def hook(exchange: Exchange) -> AddedHeaders | Awaitable[AddedHeaders]:
        if exchange.api != ANTHROPIC:
            return ()
        if exchange.rate_limit_headers is not None:  # known since admission: answered without a coroutine
            return _anthropic(exchange, exchange.rate_limit_headers, wall_clock())
        return anthropic_hook(exchange)

    async def anthropic_hook(exchange: Exchange) -> AddedHeaders:
        limits = await _rate_limit_headers(store, clock.now(), fixture(), exchange)
        return _anthropic(exchange, limits, wall_clock())

    return hook


def _anthropic(exchange: Exchange, limits: dict[str, str], wall: float) -> dict[str, str]:
    """Anthropic's headers of a reply whose ``x-ratelimit-*`` headers are ``limits`` (none when the shared
    store is unreachable), the wall clock reading ``wall``."""
    headers = {"request-id": exchange.request_id}
    if exchange.account is not None:
        headers["anthropic-organization-id"] = exchange.account.organization
    if not limits:  # the shared store is unreachable: this reply goes without them
        return headers
    for kind, families in (("requests", ("requests",)), ("tokens", ("tokens", "input-tokens", "output-tokens"))):
        reset = _rfc3339(wall + _go_seconds(limits[f"x-ratelimit-reset-{kind}"]))
        for family in families:
            headers[f"anthropic-ratelimit-{family}-limit"] = limits[f"x-ratelimit-limit-{kind}"]
            headers[f"anthropic-ratelimit-{family}-remaining"] = limits[f"x-ratelimit-remaining-{kind}"]
            headers[f"anthropic-ratelimit-{family}-reset"] = reset
    return headers


def _go_seconds(duration: str) -> float:
    """``1m30s`` -> 90.0: the reverse of :func:`mockserver.errors.go_duration`."""
    return sum(float(value) * _SECONDS[unit] for value, unit in _GO_DURATION_PART.findall(duration))


def _rfc3339(epoch: float) -> str:
    return datetime.datetime.fromtimestamp(epoch, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
