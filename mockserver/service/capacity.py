"""The limited Ultrafast preview capacity: a cap on Ultrafast requests in flight.

Every Ultrafast request, streamed or not, holds a :class:`Slot` from admission until its
reply ends, fails or the client goes away. There are two pools: the whole server
(``capacity.ultrafast_concurrency``) and each organization (``organizations[].
ultrafast_concurrency``); a request needs a place in both. Taking both is one atomic
store call, so the cap is exact however many requests race for it.

Past the cap, ``capacity.when_full`` decides: ``reject`` answers 429 or 503 with
``retry-after``, ``downgrade`` serves the request on the ``default`` tier instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mockserver import errors
from mockserver.config.fixture import Fixture
from mockserver.service.ratelimits import retry_headers
from mockserver.state.store import Store

SERVER_POOL = "ultrafast"


def org_pool(organization: str) -> str:
    return f"ultrafast|{organization}"


@dataclass
class Slot:
    """One place in the Ultrafast pools. :meth:`release` gives it back exactly once, however often called."""

    store: Store
    pools: tuple[str, ...]
    released: bool = field(default=False)

    def release(self) -> None:
        if not self.released:
            self.released = True
            self.store.release(self.pools)


def acquire(store: Store, fixture: Fixture, organization: str, model_id: str) -> Slot | None:
    """Take an Ultrafast slot for the organization.

    Returns None when the pools are full and the policy is ``downgrade``; raises the
    retryable 429/503 when it is ``reject``.
    """
    org = fixture.organization(organization)
    pools = [(SERVER_POOL, fixture.capacity.ultrafast_concurrency), (org_pool(organization), org.ultrafast_concurrency)]
    if store.acquire(pools) is None:
        return Slot(store, tuple(name for name, _ in pools))
    policy = fixture.capacity
    if policy.when_full == "downgrade":
        return None
    wait = policy.retry_after_ms / 1000
    error = errors.ultrafast_capacity(model_id, policy.reject_status, errors.go_duration(wait))
    error.headers.update({**retry_headers(wait), "x-should-retry": "true"})
    raise error
