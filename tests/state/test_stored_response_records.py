"""The in-memory store keeps each response as its JSON record: what it gives back is what was put,
and however many input items a response has, storing it leaves no objects for the garbage collector
to walk (each full pass holds the event loop for as long as it walks)."""

from __future__ import annotations

import asyncio
import gc

from mockserver.config.settings import DEFAULT_STORED_RESPONSE_BYTES
from mockserver.engine.pacing import FakeClock
from mockserver.state.responses import ResponseStore, StoredResponse


def response(response_id: str, items: int, *, background: bool = False) -> StoredResponse:
    return StoredResponse(
        id=response_id,
        project="proj_1",
        final_body={"id": response_id, "status": "completed", "output": [{"type": "message", "content": []}]},
        in_progress_body={"id": response_id, "status": "in_progress", "output": []},
        ready_at=1010.0,  # FakeClock starts at 1000
        conversation=tuple(("user" if n % 2 == 0 else "assistant", f"line {n}") for n in range(items)),
        input_items=tuple(
            {"id": f"msg_{n}", "type": "message", "role": "user", "content": [{"type": "input_text", "text": f"{n}"}]}
            for n in range(items)
        ),
        background=background,
        started_at=1002.0,
    )


def store(clock: FakeClock) -> ResponseStore:
    return ResponseStore(clock.now, max_items=100, ttl_s=3600, max_bytes=DEFAULT_STORED_RESPONSE_BYTES)


def test_what_is_found_is_what_was_put() -> None:
    kept = store(FakeClock())
    for put in (response("resp_1", 3), response("resp_2", 0, background=True)):
        asyncio.run(kept.put(put))
        assert asyncio.run(kept.find("proj_1", put.id)) == put
    assert asyncio.run(kept.find("proj_2", "resp_1")) is None  # another project's key sees nothing


def test_cancelling_keeps_the_record_and_sets_the_flag() -> None:
    clock = FakeClock()
    kept = store(clock)
    asyncio.run(kept.put(response("resp_1", 2, background=True)))
    assert asyncio.run(kept.cancel("proj_1", "resp_1"))["status"] == "cancelled"
    found = asyncio.run(kept.find("proj_1", "resp_1"))
    assert found is not None and found.cancelled and found.input_items == response("resp_1", 2).input_items
    assert kept.is_cancelled("resp_1")


def test_a_response_of_many_items_leaves_nothing_for_the_collector_to_walk() -> None:
    kept = store(FakeClock())
    big = response("resp_big", 20_000)
    gc.collect()
    before = len(gc.get_objects())
    asyncio.run(kept.put(big))
    del big
    gc.collect()
    # The 20,000 items and their 40,000 dicts and lists are gone: the store holds bytes and a few objects.
    assert len(gc.get_objects()) - before < 50
    found = asyncio.run(kept.find("proj_1", "resp_big"))
    assert found is not None and len(found.input_items) == 20_000 and found.conversation[1] == ("assistant", "line 1")
