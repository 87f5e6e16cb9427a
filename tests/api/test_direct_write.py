"""A streamed reply's head and events go straight onto uvicorn's transport (the direct write) with the
installed uvicorn.

:class:`mockserver.api.asgi.transport.DirectWriter` reaches into uvicorn's httptools request cycle.
When a uvicorn release renames what it uses, the writer quietly falls back to ``send``: every event
still arrives, for about a fifth more CPU per event (docs/performance.md). This test fails then, so
the fallback can't ship unnoticed; fix the writer for the new uvicorn (or pin uvicorn below it in
``pyproject.toml`` and ``constraints.txt``).
"""

from __future__ import annotations

import asyncio
import gc
import logging
from typing import Any

import pytest
from uvicorn.protocols.http.httptools_impl import RequestResponseCycle

from mockserver import MockServer
from mockserver.api.asgi import transport
from tests.support import MESSAGES, sdk


@pytest.fixture
def writes(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How the server wrote each request's head and streamed events: made writers, direct writes, fallbacks."""
    counts = {"requests": 0, "writers": 0, "direct": 0, "fallback": 0, "heads": 0, "head_fallback": 0}
    make = transport._direct_writer
    write, write_head = transport.DirectWriter.write, transport.DirectWriter.write_head

    def counted(send: Any) -> transport.DirectWriter | None:
        counts["requests"] += 1
        writer = make(send)
        counts["writers"] += writer is not None
        return writer

    def counted_write(self: transport.DirectWriter, body: bytes) -> bool:
        wrote = write(self, body)
        counts["direct" if wrote else "fallback"] += 1
        return wrote

    def counted_head(self: transport.DirectWriter, status: int, headers: list[tuple[bytes, bytes]]) -> bool:
        wrote = write_head(self, status, headers)
        counts["heads" if wrote else "head_fallback"] += 1
        return wrote

    monkeypatch.setattr(transport, "_direct_writer", counted)
    monkeypatch.setattr(transport.DirectWriter, "write", counted_write)
    monkeypatch.setattr(transport.DirectWriter, "write_head", counted_head)
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
    assert (writes["heads"], writes["head_fallback"]) == (1, 0), "the head fell back to send"


def test_a_whole_reply_s_head_takes_the_direct_write(writes: dict[str, int]) -> None:
    with MockServer(time_scale=0, seed=1) as server, sdk(server) as client:
        reply = client.chat.completions.create(model="gpt-5.6-sol", messages=MESSAGES, max_completion_tokens=5)
    assert reply.choices[0].message.content
    assert (writes["heads"], writes["head_fallback"]) == (1, 0), "the head of a reply with a length fell back to send"


class _Recorded:
    """A transport that records each write on it, and passes everything on."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))
        self.inner.write(data)

    def __getattr__(self, name: str) -> Any:  # close, get_extra_info (the kernel's arrival time), ...
        return getattr(self.inner, name)


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> list[_Recorded]:
    """Each request's transport, recording every write on its connection in order (one per request):
    the direct writer's and those of uvicorn's own ``send``."""
    transports: list[_Recorded] = []
    make = transport._direct_writer

    def recording(send: Any) -> transport.DirectWriter | None:
        writer = make(send)
        if writer is not None:
            writer.transport = writer.cycle.transport = _Recorded(writer.transport)
            transports.append(writer.transport)
        return writer

    monkeypatch.setattr(transport, "_direct_writer", recording)
    return transports


def _stream(client: Any, ttft_ms: int, tokens: int) -> str:
    stream = client.chat.completions.create(
        model="gpt-5.6-sol",
        messages=MESSAGES,
        stream=True,
        max_completion_tokens=tokens,
        extra_headers={"x-mock-ttft-ms": str(ttft_ms)},
    )
    return "".join(c.choices[0].delta.content or "" for c in stream if c.choices)


def test_a_first_token_due_at_once_goes_out_with_the_head(recorded: list[_Recorded]) -> None:
    with MockServer(seed=1) as server, sdk(server) as client:
        assert _stream(client, ttft_ms=0, tokens=5)
    (written,) = [r.writes for r in recorded]
    first = written[0]
    assert first.startswith(b"HTTP/1.1 200 OK\r\n")
    # the role's chunk and the first token's, in the head's write
    assert first.count(b"data: {") == 2 and b'"role":"assistant"' in first
    assert len(written) > 2 and written[-1] == b"0\r\n\r\n"  # the later tokens on their deadlines, then the end


def test_a_whole_reply_due_at_once_goes_out_with_the_head_then_its_end(recorded: list[_Recorded]) -> None:
    with MockServer(time_scale=0, seed=1) as server, sdk(server) as client:
        assert _stream(client, ttft_ms=0, tokens=5)
    (written,) = [r.writes for r in recorded]
    head_and_events, end = written
    assert head_and_events.startswith(b"HTTP/1.1 200 OK\r\n") and head_and_events.endswith(b"data: [DONE]\n\n\r\n")
    assert end == b"0\r\n\r\n"  # through send, after the journal has the reply


def test_a_first_token_not_due_yet_leaves_the_head_alone(recorded: list[_Recorded]) -> None:
    with MockServer(seed=1) as server, sdk(server) as client:
        # A first request warms the process up: a fresh server's first one takes longer from its
        # arrival (which the TTFT counts from) to its stream than the TTFT below.
        assert _stream(client, ttft_ms=0, tokens=1)
        assert _stream(client, ttft_ms=200, tokens=3)
    written = recorded[1].writes
    assert written[0].startswith(b"HTTP/1.1 200 OK\r\n") and b"data:" not in written[0]
    assert b"data:" in written[1]


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


class _Transport:
    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def close(self) -> None:
        self.closed = True


class _Flow:
    write_paused = False


def _cycle(method: str = "POST", keep_alive: bool = True) -> RequestResponseCycle:
    return RequestResponseCycle(
        scope={  # type: ignore[typeddict-item]
            "method": method,
            "path": "/v1/chat/completions",
            "raw_path": b"/v1/chat/completions",  # what uvicorn's access log reads from 0.55 on
            "query_string": b"",
            "http_version": "1.1",
        },
        transport=_Transport(),  # type: ignore[arg-type]
        flow=_Flow(),  # type: ignore[arg-type]
        logger=logging.getLogger("test"),
        access_logger=logging.getLogger("test.access.off"),
        access_log=True,
        default_headers=[(b"date", b"Sun, 06 Dec 2026 22:33:32 GMT"), (b"server", b"uvicorn")],
        message_event=asyncio.Event(),
        expect_100_continue=True,
        keep_alive=keep_alive,
        on_response=lambda: None,
    )


_STATE = ("response_started", "chunked_encoding", "keep_alive", "waiting_for_100_continue", "expected_content_length")
_SSE = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-request-id", b"req_1"),
]


_JSON = [(b"content-length", b"17"), (b"content-type", b"application/json"), (b"x-request-id", b"req_1")]


@pytest.mark.parametrize("headers", [_SSE, _JSON], ids=["streamed", "with a length"])
@pytest.mark.parametrize(
    ("method", "keep_alive", "status"),
    [("POST", True, 200), ("POST", False, 429), ("HEAD", True, 200), ("POST", True, 204)],
)
def test_a_head_written_directly_is_what_uvicorn_writes(
    method: str, keep_alive: bool, status: int, headers: list[tuple[bytes, bytes]]
) -> None:
    logging.getLogger("test.access.off").setLevel(logging.WARNING)
    sent, direct = _cycle(method, keep_alive), _cycle(method, keep_alive)
    asyncio.run(sent.send({"type": "http.response.start", "status": status, "headers": list(headers)}))
    writer = transport._direct_writer(direct.send)
    assert writer is not None and writer.write_head(status, list(headers))
    assert direct.transport.written == sent.transport.written  # type: ignore[attr-defined]
    assert [getattr(direct, name) for name in _STATE] == [getattr(sent, name) for name in _STATE]


@pytest.mark.parametrize(
    "headers",
    [
        [(b"Content-Type", b"text/plain")],  # uvicorn lowers the name
        [(b"content-length", b"2"), (b"content-length", b"3")],  # uvicorn frames the body by the first
        [(b"content-length", b"+2")],  # uvicorn's int() reads it
        [(b"content-length", b"2"), (b"transfer-encoding", b"chunked")],
        [(b"connection", b"close")],
        [(b"transfer-encoding", b"chunked")],
        [(b"x-bad", b"a\r\nb")],  # uvicorn refuses it
        [(b"x bad", b"a")],
    ],
)
def test_a_head_uvicorn_reads_or_refuses_goes_through_send(headers: list[tuple[bytes, bytes]]) -> None:
    logging.getLogger("test.access.off").setLevel(logging.WARNING)
    cycle = _cycle()
    writer = transport._direct_writer(cycle.send)
    assert writer is not None and not writer.write_head(200, headers)
    assert cycle.transport.written == [] and not cycle.response_started  # type: ignore[attr-defined]


def test_a_head_written_directly_is_logged_as_uvicorn_logs_it(caplog: pytest.LogCaptureFixture) -> None:
    sent, direct = _cycle(), _cycle()
    for cycle in (sent, direct):
        cycle.access_logger = logging.getLogger("test.access.on")
        cycle.scope.update(client=("127.0.0.1", 5000), query_string=b"a=1")  # type: ignore[typeddict-item]
    with caplog.at_level(logging.INFO, logger="test.access.on"):
        asyncio.run(sent.send({"type": "http.response.start", "status": 200, "headers": list(_SSE)}))
        writer = transport._direct_writer(direct.send)
        assert writer is not None and writer.write_head(200, list(_SSE))
    first, second = caplog.records
    assert (first.msg, first.args) == (second.msg, second.args)
    assert second.getMessage() == '127.0.0.1:5000 - "POST /v1/chat/completions?a=1 HTTP/1.1" 200'
    assert direct.transport.written == sent.transport.written  # type: ignore[attr-defined]
    assert not writer.write_head(200, list(_SSE))  # the head is out: nothing more is written


def _corked_stream(events: list[bytes]) -> tuple[RequestResponseCycle, transport.DirectWriter]:
    cycle = _cycle()
    writer = transport._direct_writer(cycle.send)
    assert writer is not None
    writer.cork()
    assert writer.write_head(200, list(_SSE))
    for event in events:
        assert writer.write(event)
    return cycle, writer


def test_a_corked_writer_puts_what_it_holds_on_the_transport_in_one_write() -> None:
    logging.getLogger("test.access.off").setLevel(logging.WARNING)
    events = [b"data: 1\n\n", b"data: 2\n\n"]
    corked, writer = _corked_stream(events)
    assert corked.transport.written == []  # type: ignore[attr-defined]
    writer.uncork()
    straight = _cycle()
    plain = transport._direct_writer(straight.send)
    assert plain is not None and plain.write_head(200, list(_SSE))
    for event in events:
        assert plain.write(event)
    assert corked.transport.written == [b"".join(straight.transport.written)]  # type: ignore[attr-defined]
    assert writer.write(b"data: 3\n\n")  # uncorked: the next goes straight on
    assert corked.transport.written[-1] == b"9\r\ndata: 3\n\n\r\n"  # type: ignore[attr-defined]
    writer.uncork()  # nothing held: nothing written
    assert len(corked.transport.written) == 2  # type: ignore[attr-defined]


def test_nothing_overtakes_what_a_corked_writer_holds() -> None:
    logging.getLogger("test.access.off").setLevel(logging.WARNING)
    # A write the writer leaves to send (here: the client is gone) puts what it holds first.
    cycle, writer = _corked_stream([b"data: 1\n\n"])
    cycle.disconnected = True
    assert not writer.write(b"data: 2\n\n")
    (held,) = cycle.transport.written  # type: ignore[attr-defined]
    assert held.startswith(b"HTTP/1.1 200 OK\r\n") and held.endswith(b"data: 1\n\n\r\n")
    # Closing the connection (the drop_after fault) writes what is held, then closes.
    cycle, writer = _corked_stream([b"data: 1\n\n"])
    writer.close()
    assert len(cycle.transport.written) == 1 and cycle.transport.closed  # type: ignore[attr-defined]
