"""The queue across processes on a real ``redis-server``: a slot given back by another process (which
cannot tell this one) reaches the first waiter here at the next poll, within one ``POLL_S`` of the
clock, and not before: the line polls only when its clock says a poll is due."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap

from mockserver.service import capacity
from mockserver.service.capacity import queue as capacity_queue
from mockserver.service.capacity.queue import Queue
from mockserver.state import shared
from mockserver.state.redis import RedisStore
from tests.redis_server import RedisServer
from tests.service.manual_clock import ManualClock, settle
from tests.service.test_capacity_queue import fixture

# Another process: takes the server's one slot, says "held", gives it back when told, says "released".
OTHER_PROCESS = textwrap.dedent(
    """
    import asyncio, sys
    from mockserver.state import shared
    from mockserver.state.redis import RedisStore

    async def main(url):
        store = RedisStore(await shared.connect(url), url)
        assert await store.acquire([("ultrafast", 1)], "other-process") is None
        print("held", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        await store.release(["ultrafast"], "other-process")
        print("released", flush=True)
        await store.close()

    asyncio.run(main(sys.argv[1]))
    """
)


async def until(predicate: object, seconds: float = 5.0) -> None:
    """Real time, for the store's round trips to land (not for the queue: its clock is the test's)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not predicate() and loop.time() < deadline:  # type: ignore[operator]
        await asyncio.sleep(0.01)


def test_a_slot_given_back_by_another_process_is_taken_here_at_the_next_poll(redis_server: RedisServer) -> None:
    command = [sys.executable, "-c", OTHER_PROCESS, redis_server.url]
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as other:
        assert other.stdin is not None and other.stdout is not None
        assert other.stdout.readline().strip() == "held"

        async def body() -> None:
            store = RedisStore(await shared.connect(redis_server.url), redis_server.url)
            clock, fx = ManualClock(), fixture(cap=1, queue_ms=60_000)
            try:
                waiting = asyncio.ensure_future(capacity.acquire(store, fx, "org-a", "m", queue=Queue(60.0, clock)))
                await until(lambda: capacity_queue.waiting() == 1)
                clock.advance(capacity_queue.POLL_S)  # a poll while the other process holds the slot: refused
                await settle()
                await asyncio.sleep(0.2)
                assert not waiting.done()

                assert other.stdin is not None and other.stdout is not None
                other.stdin.write("\n")
                other.stdin.flush()
                assert other.stdout.readline().strip() == "released"
                await asyncio.sleep(0.2)  # given back in Redis; no poll is due yet, so nothing here tries
                assert not waiting.done()

                clock.advance(capacity_queue.POLL_S)  # the next poll takes it
                await until(waiting.done)
                slot = waiting.result()
                assert slot is not None and await store.in_flight(capacity.SERVER_POOL) == 1
                await slot.released()
                assert capacity_queue.waiting() == 0 and clock.pending() == 0
            finally:
                await store.close()

        try:
            asyncio.run(body())
        finally:
            other.kill()
