"""Streamed events go straight onto uvicorn's transport (the direct write) with the installed uvicorn.

:func:`mockserver.api.asgi.transport.direct_body_writer` reaches into uvicorn's httptools request cycle.
When a uvicorn release renames what it uses, the writer quietly falls back to ``send``: every event
still arrives, for about a fifth more CPU per event (docs/performance.md). This test fails then, so
the fallback can't ship unnoticed; fix the writer for the new uvicorn (or pin uvicorn below it in
``pyproject.toml`` and ``constraints.txt``).
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

import pytest
from uvicorn.protocols.http.httptools_impl import RequestResponseCycle

from mockserver import MockServer
from mockserver.api.asgi import transport
from tests.support import MESSAGES, sdk


@pytest.fixture
def writes(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How the server wrote the streamed events of each request: made writers, direct writes, fallbacks."""
    counts = {"requests": 0, "writers": 0, "direct": 0, "fallback": 0}
    make = transport.direct_body_writer

    def counted(send: Any) -> Callable[[bytes], bool] | None:
        counts["requests"] += 1
        write = make(send)
        if write is None:
            return None
        counts["writers"] += 1

        def counted_write(body: bytes) -> bool:
            wrote = write(body)
            counts["direct" if wrote else "fallback"] += 1
            return wrote

        return counted_write

    monkeypatch.setattr(transport, "direct_body_writer", counted)
    return counts


def test_streamed_events_take_the_direct_write(writes: dict[str, int]) -> None:
    with MockServer(time_scale=0, seed=1) as server, sdk(server) as client:  # uvicorn as `serve` runs it
        stream = client.chat.completions.create(
            model="gpt-5.6-sol", messages=MESSAGES, stream=True, max_completion_tokens=40
        )
        chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text and chunks[-1].choices[0].finish_reason == "length"
    assert writes["requests"] == 1
    assert writes["writers"] == 1, "uvicorn's request cycle no longer has what the direct write uses"
    assert writes["direct"] > 0, "every event fell back to send: the direct write is never taken"
    assert writes["fallback"] == 0, f"{writes['fallback']} of the events fell back to send"


def test_a_served_request_leaves_no_cycle_for_the_garbage_collector() -> None:
    """What the connection setup puts on the scope refers to uvicorn's request cycle, which refers to
    the scope: taken off once the app returns, the cycle, its transport and socket are freed at once."""
    with MockServer(time_scale=0, seed=1) as server, sdk(server) as client:
        for _ in range(2):  # the first request of a connection, and one more on it
            list(client.chat.completions.create(model="gpt-5.6-sol", messages=MESSAGES, stream=True))
        gc.collect()
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            for _ in range(3):
                list(client.chat.completions.create(model="gpt-5.6-sol", messages=MESSAGES, stream=True))
                client.chat.completions.create(model="gpt-5.6-sol", messages=MESSAGES)
            gc.collect()
            cycles = [o for o in gc.garbage if isinstance(o, RequestResponseCycle)]
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
    assert cycles == []
