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

from collections.abc import Callable

from mockserver.config.fixture import Fixture
from mockserver.engine.pacing import Clock
from mockserver.service import ratelimits
from mockserver.service.exchange import Exchange, HeaderHook
from mockserver.state.store import Store

OPENAI_VERSION = "2020-10-01"


def openai_headers(store: Store, clock: Clock, fixture: Callable[[], Fixture]) -> HeaderHook:
    """An ``on_response_start`` hook adding the headers above."""

    def hook(exchange: Exchange) -> dict[str, str]:
        now = clock.now()
        headers = {
            "openai-version": OPENAI_VERSION,
            "openai-processing-ms": str(max(0, round((now - exchange.started_at) * 1000))),
        }
        account = exchange.account
        if account is not None:
            headers["openai-organization"] = account.organization
            headers["openai-project"] = account.project
        if exchange.rate_limit_headers is not None:
            headers.update(exchange.rate_limit_headers)
        elif account is not None:
            headers.update(ratelimits.headers(store, now, ratelimits.key_target(fixture(), account)))
        else:
            headers.update(ratelimits.unused_headers(ratelimits.limits_for(fixture(), None, None, None)))
        return headers

    return hook
