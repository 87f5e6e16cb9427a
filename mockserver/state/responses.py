"""Stored responses (``store: true``, the default): retrieve, delete, and chain with ``previous_response_id``.

Each response is kept with the project that created it; another project's key
sees a 404, as if it did not exist. A stored response reads ``in_progress`` until
its schedule ends, then its final body, so ``GET`` during a paced stream shows
what the live API would. A ``background`` response reads ``queued`` until its
first token is due, and can be cancelled until its schedule ends; cancelling any
other response is refused, as live. The whole store goes with :meth:`ResponseStore.reset`.

:class:`ResponseStore` keeps them in this process (the default);
:class:`~mockserver.state.shared_responses.RedisResponseStore` in Redis, for every worker and
replica. Both answer the same coroutines (:class:`BaseResponseStore`).

The store is bounded (``Settings.stored_responses``, ``stored_response_ttl`` and
``stored_response_bytes``): past the count or the bytes the oldest responses are evicted, and a
response older than the age limit is gone. A response's size is that of its bodies, conversation
and input items as JSON (:func:`stored_record`), what both stores keep of it: the in-memory store
too keeps each response as that JSON, and reads it back when asked. A response of 15,000 input items
would otherwise be some 50,000 Python objects for as long as it is stored, every one of them walked
by each full pass of the garbage collector, which holds the event loop for the whole pass (it grew
by about 30 ms for each such response stored). Bytes are never walked.
An evicted response is the live API's 404, for ``GET`` and ``previous_response_id`` alike.

A response is stored as a :class:`DeferredRecord`, before its output is made: a stream makes its
text as it goes out, and making it all (then its record) before the first token would hold up that
token by as long as the whole reply takes to make. Its input items are kept as JSON from the start.
The store in this process makes the rest when the response is first read, or once the request is
over (:meth:`BaseResponseStore.settle`), so a response is never read without it; a store shared by
processes makes it at once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import orjson

from mockserver import errors

ConversationItem = tuple[str, str]  # (kind, text), as :mod:`mockserver.engine.conversation` reads them


@dataclass(frozen=True)
class StoredResponse:
    id: str
    project: str
    final_body: dict[str, Any]
    in_progress_body: dict[str, Any]
    ready_at: float
    conversation: tuple[ConversationItem, ...]  # input and output of this turn and every turn before it
    input_items: tuple[dict[str, Any], ...] = ()  # this turn's input, as GET .../input_items lists it
    background: bool = False
    started_at: float = 0.0  # a background response is queued until then
    cancelled: bool = False

    def body_at(self, now: float) -> dict[str, Any]:
        if self.cancelled:
            return {**self.in_progress_body, "status": "cancelled"}
        if now >= self.ready_at:
            return self.final_body
        if self.background and now < self.started_at:
            return {**self.in_progress_body, "status": "queued"}
        return self.in_progress_body


def stored_record(response: StoredResponse | DeferredRecord) -> bytes:
    """What a store keeps of a response besides its flags and times: its bodies, conversation and
    input items, as JSON. A :class:`DeferredRecord`'s bodies and conversation are made now."""
    if isinstance(response, DeferredRecord):
        return response.record()
    return _record(response.final_body, response.in_progress_body, response.conversation, response.input_items)


def _record(final_body: Any, in_progress_body: Any, conversation: Any, input_items: Any) -> bytes:
    record = {
        "final_body": final_body,
        "in_progress_body": in_progress_body,
        "conversation": conversation,
        "input_items": input_items,
    }
    return orjson.dumps(record)


# What makes a deferred record's final body, its body while in progress, and its conversation.
Finish = Callable[[], tuple[dict[str, Any], dict[str, Any], tuple[ConversationItem, ...]]]


@dataclass(frozen=True, slots=True)
class DeferredRecord:
    """A response stored before its output is made (see the module's docstring): what a store reads
    of it at once, its input items already as JSON, and ``finish``, which makes its bodies
    and conversation."""

    id: str
    project: str
    ready_at: float
    started_at: float
    background: bool
    input_items: bytes  # as JSON: a long input is not kept as objects while the reply goes out
    finish: Finish

    def record(self) -> bytes:
        """Its record (:func:`stored_record`), its bodies and conversation made now."""
        final_body, in_progress_body, conversation = self.finish()
        return _record(final_body, in_progress_body, conversation, orjson.Fragment(self.input_items))


def stored_size(response: StoredResponse) -> int:
    """The bytes a response counts against ``stored_response_bytes``."""
    return len(stored_record(response))


def from_record(
    response_id: str,
    project: str,
    record: bytes,
    *,
    ready_at: float,
    started_at: float,
    background: bool,
    cancelled: bool,
) -> StoredResponse:
    """The response a store kept as :func:`stored_record`'s JSON, with its flags and times."""
    fields = orjson.loads(record)
    return StoredResponse(
        id=response_id,
        project=project,
        final_body=fields["final_body"],
        in_progress_body=fields["in_progress_body"],
        ready_at=ready_at,
        conversation=tuple((kind, text) for kind, text in fields["conversation"]),
        input_items=tuple(fields["input_items"]),
        background=background,
        started_at=started_at,
        cancelled=cancelled,
    )


@dataclass(frozen=True, slots=True)
class _Kept:
    """A response as :class:`ResponseStore` keeps it: its record as JSON (:func:`stored_record`), which
    the garbage collector never walks, and what is read without it."""

    project: str
    record: bytes
    ready_at: float
    started_at: float
    background: bool
    cancelled: bool = False
    deferred: DeferredRecord | None = None  # stored with its record deferred: made when first needed

    def response(self, response_id: str) -> StoredResponse:
        return from_record(
            response_id,
            self.project,
            self.record,
            ready_at=self.ready_at,
            started_at=self.started_at,
            background=self.background,
            cancelled=self.cancelled,
        )


class BaseResponseStore:
    """What every store of responses answers, on top of :meth:`find`: this process's
    :class:`ResponseStore`, or :class:`~mockserver.state.shared_responses.RedisResponseStore`, one
    for every worker and replica. Every method that reads or changes the store is a coroutine, but
    :meth:`settle`, which the end of a request calls, and which waits on nothing."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._now = clock

    async def put(self, response: StoredResponse | DeferredRecord) -> None:
        raise NotImplementedError

    def settle(self, response_id: str) -> None:
        """The request of a response stored as a :class:`DeferredRecord` is over: make its record now,
        if this store has not yet (a store shared by processes made it when it was put)."""

    async def find(self, project: str, response_id: str) -> StoredResponse | None:
        """The response, if it is stored and belongs to ``project``."""
        raise NotImplementedError

    async def cancel(self, project: str, response_id: str) -> dict[str, Any]:
        """Cancel a background response still queued or in progress; a finished one is returned as it is."""
        raise NotImplementedError

    async def delete(self, project: str, response_id: str) -> dict[str, Any]:
        raise NotImplementedError

    async def reset(self) -> None:
        raise NotImplementedError

    def cancel_flag(self, response_id: str, until: float) -> Callable[[], bool]:
        """Whether a background response this process streams has been cancelled (read on every event,
        so it does not wait on anything); ``until`` is when its schedule ends."""
        raise NotImplementedError

    async def close(self) -> None:
        """Let go of what the store runs in the background (nothing, in memory)."""

    async def count(self) -> int:
        """How many responses are stored (``GET /_mock/stats``)."""
        raise NotImplementedError

    async def get(self, project: str, response_id: str) -> dict[str, Any]:
        found = await self.find(project, response_id)
        if found is None:
            raise errors.response_not_found(response_id)
        return found.body_at(self._now())

    async def previous(self, project: str, response_id: str) -> StoredResponse:
        found = await self.find(project, response_id)
        if found is None:
            raise errors.previous_response_not_found(response_id)
        return found

    async def input_items(self, project: str, response_id: str) -> tuple[dict[str, Any], ...]:
        found = await self.find(project, response_id)
        if found is None:
            raise errors.response_not_found(response_id)
        return found.input_items


class ResponseStore(BaseResponseStore):
    """The responses stored in this process (the default). A lock makes each method atomic across threads."""

    def __init__(
        self,
        clock: Callable[[], float],
        *,
        max_items: int,
        ttl_s: float,
        max_bytes: int,
    ) -> None:
        super().__init__(clock)
        self._max_items = max_items
        self._ttl_s = ttl_s
        self._max_bytes = max_bytes
        self._items: dict[str, _Kept] = {}  # oldest first: dicts keep insertion order
        self._stored_at: dict[str, float] = {}
        self._sizes: dict[str, int] = {}
        self.bytes = 0  # what the stored responses take, as stored_size counts
        self._lock = threading.Lock()  # servers in threads of one process may share nothing else, but be safe

    async def put(self, response: StoredResponse | DeferredRecord) -> None:
        deferred: DeferredRecord | None
        if isinstance(response, DeferredRecord):  # its record is made when first needed (see the module's docstring)
            record, cancelled, deferred = b"", False, response
            size = len(response.input_items)  # what it holds as bytes until then
        else:
            record, cancelled, deferred = stored_record(response), response.cancelled, None
            size = len(record)
        kept = _Kept(
            response.project, record, response.ready_at, response.started_at, response.background, cancelled, deferred
        )
        with self._lock:
            self._items[response.id] = kept
            self._stored_at.setdefault(response.id, self._now())
            self.bytes += size - self._sizes.get(response.id, 0)
            self._sizes[response.id] = size
            self._evict()

    def _evict(self) -> None:
        """Drop responses past the age limit, then the oldest past the count or the bytes. The newest
        stays even when it alone is over the bytes (it was just answered as stored). The lock is held."""
        expired_before = self._now() - self._ttl_s
        gone: list[str] = []
        left, size = len(self._stored_at), self.bytes
        newest = next(reversed(self._stored_at), None)
        for response_id, stored_at in self._stored_at.items():  # no copy: most calls stop at the first
            small_enough = size <= self._max_bytes or response_id == newest
            if stored_at > expired_before and left <= self._max_items and small_enough:
                break  # everything after this one is younger
            gone.append(response_id)
            left -= 1
            size -= self._sizes.get(response_id, 0)
        for response_id in gone:
            self._forget(response_id)

    def _forget(self, response_id: str) -> None:
        self._stored_at.pop(response_id, None)
        self._items.pop(response_id, None)
        self.bytes -= self._sizes.pop(response_id, 0)

    def _settled(self, response_id: str, kept: _Kept) -> _Kept:
        """``kept``, with its record made if it was deferred, and counted (the caller evicts what
        that puts over the bytes). The lock is held."""
        if kept.deferred is None:
            return kept
        record = kept.deferred.record()
        kept = self._items[response_id] = replace(kept, record=record, deferred=None)
        self.bytes += len(record) - self._sizes.get(response_id, 0)
        self._sizes[response_id] = len(record)
        return kept

    def settle(self, response_id: str) -> None:
        with self._lock:
            kept = self._items.get(response_id)
            if kept is not None:
                self._settled(response_id, kept)
                self._evict()

    async def find(self, project: str, response_id: str) -> StoredResponse | None:
        with self._lock:
            self._evict()
            found = self._items.get(response_id)
            if found is None or found.project != project:
                return None
            found = self._settled(response_id, found)
            self._evict()
        return found.response(response_id)

    def is_cancelled(self, response_id: str) -> bool:
        found = self._items.get(response_id)
        return found is not None and found.cancelled

    def cancel_flag(self, response_id: str, until: float) -> Callable[[], bool]:
        return partial(self.is_cancelled, response_id)

    async def cancel(self, project: str, response_id: str) -> dict[str, Any]:
        now = self._now()
        with self._lock:
            found = self._items.get(response_id)
            if found is None or found.project != project:
                raise errors.response_not_found(response_id)
            if not found.background:
                raise errors.cannot_cancel_synchronous()
            found = self._settled(response_id, found)
            if not found.cancelled and now < found.ready_at:
                found = self._items[response_id] = replace(found, cancelled=True)
            self._evict()
        return found.response(response_id).body_at(now)

    async def delete(self, project: str, response_id: str) -> dict[str, Any]:
        with self._lock:
            found = self._items.get(response_id)
            if found is None or found.project != project:
                raise errors.response_not_found(response_id)
            self._forget(response_id)
        return {"id": response_id, "object": "response", "deleted": True}

    async def reset(self) -> None:
        with self._lock:
            self._items.clear()
            self._stored_at.clear()
            self._sizes.clear()
            self.bytes = 0

    async def count(self) -> int:
        with self._lock:
            self._evict()
            return len(self._items)

    def __len__(self) -> int:
        return len(self._items)
