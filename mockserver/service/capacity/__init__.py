"""The limited Ultrafast preview capacity: a cap on Ultrafast requests in flight.

Every Ultrafast request, streamed or not, holds a :class:`Slot` from admission until its
reply ends, fails or the client goes away. There are two pools: the whole server
(``capacity.ultrafast_concurrency``) and each organization (``organizations[].
ultrafast_concurrency``); a request needs a place in both. Taking both is one atomic
store call, so the cap is exact however many requests race for it.

While the pools are full, a request first waits up to ``capacity.queue_ms`` for a slot
(:mod:`mockserver.service.capacity.queue`). Past the cap (and the wait), ``capacity.when_full``
decides: ``reject`` answers 429 or 503 with ``retry-after`` (times the time scale, as every wait
the server asks for), ``downgrade`` serves the request on the ``default`` tier instead.

This module holds the slots; :mod:`.queue` how long a request may wait for one, and :mod:`.line`
who is first when one comes back.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from mockserver import errors
from mockserver.config.fixture import Fixture
from mockserver.service.capacity import queue as capacity_queue
from mockserver.service.capacity.queue import Outcome, Queue
from mockserver.service.ratelimits import retry_delay, retry_headers
from mockserver.state.store import Store

SERVER_POOL = "ultrafast"

logger = logging.getLogger("mockserver")

# A lease names one request's slot; unique across processes and hosts sharing one store.
_PROCESS = uuid.uuid4().hex[:12]
_LEASES = itertools.count(1)
_GIVING_BACK: set[asyncio.Task[None]] = set()  # releases under way: kept so none is collected early


def org_pool(organization: str) -> str:
    return f"ultrafast|{organization}"


def _pools(fixture: Fixture, organization: str) -> list[tuple[str, int | None]]:
    """The pools an Ultrafast request of ``organization`` takes a place in, with their caps."""
    org = fixture.organization(organization)
    return [(SERVER_POOL, fixture.capacity.ultrafast_concurrency), (org_pool(organization), org.ultrafast_concurrency)]


@dataclass
class Slot:
    """One place in the Ultrafast pools, held under ``lease``.

    :meth:`release` gives it back exactly once, however often called, and may be called from
    synchronous code (a stream's generator ending): it starts the store call as a task.
    :meth:`released` waits until the store has it back.
    """

    store: Store
    pools: tuple[str, ...]
    lease: str
    _giving_back: asyncio.Task[None] | None = field(default=None, repr=False)

    def release(self) -> None:
        if self._giving_back is None:
            task = asyncio.get_running_loop().create_task(self._give_back())
            _GIVING_BACK.add(task)
            task.add_done_callback(_GIVING_BACK.discard)
            self._giving_back = task

    async def released(self) -> None:
        self.release()
        assert self._giving_back is not None
        await asyncio.shield(self._giving_back)

    async def _give_back(self) -> None:
        try:
            await self.store.release(self.pools, self.lease)
            capacity_queue.notify(self.store)
        except errors.MockAPIError:
            # The shared store is unreachable: the lease expires there by itself.
            logger.warning("could not give back Ultrafast slot %s; its lease will expire", self.lease)


async def acquire(
    store: Store,
    fixture: Fixture,
    organization: str,
    model_id: str,
    time_scale: float = 1.0,
    *,
    queue: Queue | None = None,
    noted: Callable[[Outcome, float], None] | None = None,
) -> Slot | None:
    """Take an Ultrafast slot for the organization, waiting in ``queue`` while the pools are full.

    Returns None when the pools are full and the policy is ``downgrade``; raises the
    retryable 429/503 when it is ``reject``. Its ``retry-after`` is ``capacity.retry_after_ms``
    times the time scale, at least 1 ms: at time scale 0 a client retries at once. ``noted`` hears
    how a wait ended and how long it took (only when the request had to wait). Raises
    :class:`~mockserver.service.capacity.queue.ClientLeft` if the client leaves while it waits.
    """
    pools = _pools(fixture, organization)
    lease = f"{_PROCESS}-{next(_LEASES)}"
    slot = Slot(store, tuple(name for name, _ in pools), lease)
    if await store.acquire(pools, lease) is None:
        return slot
    if queue is not None and queue.wait_s > 0:
        in_force = queue.fixture

        async def take() -> bool:  # under the caps in force now: they may have changed while it waited
            return await store.acquire(pools if in_force is None else _pools(in_force(), organization), lease) is None

        try:
            outcome, waited = await capacity_queue.wait_for_slot(take, queue, store, slot.pools)
        except capacity_queue.ClientLeft as left:
            if noted is not None:
                noted("left", left.waited)
            raise
        if noted is not None:
            noted(outcome, waited)
        if outcome == "served":
            return slot
    policy = fixture.capacity
    if policy.when_full == "downgrade":
        return None
    wait = retry_delay(policy.retry_after_ms / 1000 * time_scale)
    error = errors.ultrafast_capacity(model_id, policy.reject_status, errors.go_duration(wait))
    error.headers.update({**retry_headers(wait), "x-should-retry": "true"})
    raise error
