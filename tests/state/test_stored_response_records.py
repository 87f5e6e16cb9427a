"""The in-memory store keeps each response as its JSON record: what it gives back is what was put,
and however many input items a response has, storing it leaves no objects for the garbage collector
to walk (each full pass holds the event loop for as long as it walks). A response stored with its record
deferred has it made once: when it is first read, or when its request is over."""

from __future__ import annotations

import asyncio
import gc

import orjson

from mockserver.config.settings import DEFAULT_STORED_RESPONSE_BYTES
from mockserver.engine.pacing import FakeClock
from mockserver.state.responses import DeferredRecord, ResponseStore, StoredResponse, stored_size


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


def deferred(whole: StoredResponse, made: list[str]) -> DeferredRecord:
    """``whole`` stored before its output is made, as a stream's response is: ``made`` lists each time
    its bodies and conversation are made."""

    def finish() -> tuple[dict[str, object], dict[str, object], tuple[tuple[str, str], ...]]:
        made.append(whole.id)
        return whole.final_body, whole.in_progress_body, whole.conversation

    return DeferredRecord(
        id=whole.id,
        project=whole.project,
        ready_at=whole.ready_at,
        started_at=whole.started_at,
        background=whole.background,
        input_items=orjson.dumps(whole.input_items),
        finish=finish,
    )


def store(clock: FakeClock, max_bytes: int = DEFAULT_STORED_RESPONSE_BYTES) -> ResponseStore:
    return ResponseStore(clock.now, max_items=100, ttl_s=3600, max_bytes=max_bytes)


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


def test_a_deferred_response_is_made_once_when_first_read() -> None:
    kept, made = store(FakeClock()), []
    asyncio.run(kept.put(deferred(response("resp_1", 3), made)))
    # Until it is made, it counts what it holds: its input items, as JSON.
    assert made == [] and kept.bytes == len(orjson.dumps(response("resp_1", 3).input_items))
    assert asyncio.run(kept.count()) == 1
    assert asyncio.run(kept.find("proj_2", "resp_1")) is None  # another project's key makes nothing
    assert asyncio.run(kept.find("proj_1", "resp_1")) == response("resp_1", 3)
    assert asyncio.run(kept.find("proj_1", "resp_1")) == response("resp_1", 3)
    kept.settle("resp_1")
    assert made == ["resp_1"] and kept.bytes == stored_size(response("resp_1", 3))


def test_a_deferred_response_is_made_when_its_reply_is_over_and_held_to_the_bytes() -> None:
    """Until it is made it counts its input items against the bytes; made, its whole record, like any
    response: past the bytes the oldest go."""
    size = stored_size(response("resp_0", 40))
    items = len(orjson.dumps(response("resp_0", 40).input_items))
    kept, made = store(FakeClock(), max_bytes=2 * size + items), []
    for n in range(3):
        asyncio.run(kept.put(deferred(response(f"resp_{n}", 40), made)))
    assert made == [] and kept.bytes == 3 * items and asyncio.run(kept.count()) == 3
    for n in range(3):
        kept.settle(f"resp_{n}")
    assert made == ["resp_0", "resp_1", "resp_2"] and kept.bytes == 2 * size
    assert asyncio.run(kept.find("proj_1", "resp_0")) is None
    assert asyncio.run(kept.find("proj_1", "resp_2")) == response("resp_2", 40)
    asyncio.run(kept.put(deferred(response("resp_3", 40), made)))
    asyncio.run(kept.delete("proj_1", "resp_3"))
    kept.settle("resp_3")  # deleted before its reply was over: nothing to make
    assert made == ["resp_0", "resp_1", "resp_2"]


def test_a_deferred_background_response_can_be_cancelled() -> None:
    kept, made = store(FakeClock()), []
    asyncio.run(kept.put(deferred(response("resp_1", 2, background=True), made)))
    assert asyncio.run(kept.cancel("proj_1", "resp_1"))["status"] == "cancelled"
    found = asyncio.run(kept.find("proj_1", "resp_1"))
    assert found is not None and found.cancelled and found.input_items == response("resp_1", 2).input_items
    assert made == ["resp_1"] and kept.is_cancelled("resp_1")


def test_a_deferred_response_of_many_items_keeps_them_as_bytes_meanwhile() -> None:
    def finish() -> tuple[dict[str, object], dict[str, object], tuple[tuple[str, str], ...]]:
        return {"id": "resp_big", "status": "completed"}, {"id": "resp_big", "status": "in_progress"}, ()

    kept = store(FakeClock())
    gc.collect()
    before = len(gc.get_objects())
    items = response("resp_big", 20_000).input_items
    waiting = DeferredRecord("resp_big", "proj_1", 1010.0, 1002.0, False, orjson.dumps(items), finish)
    asyncio.run(kept.put(waiting))
    del items, waiting
    gc.collect()
    assert len(gc.get_objects()) - before < 50  # its 20,000 input items are JSON until it is made
    found = asyncio.run(kept.find("proj_1", "resp_big"))
    assert found is not None and len(found.input_items) == 20_000 and found.input_items[7]["id"] == "msg_7"
