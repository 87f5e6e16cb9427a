"""Watching for the client going away without a task: told once on ``http.disconnect`` (or when
``receive`` fails), other messages skipped, and nothing left waiting once it is stopped."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import time
from typing import Any

import pytest
from uvicorn.protocols.http.flow_control import FlowControl
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

from mockserver import MockServer
from mockserver.api import sse
from mockserver.api.asgi import disconnect_watch, transport
from mockserver.api.asgi.disconnect_watch import CycleWatch, DisconnectWatch, watch_client
from tests.support import MESSAGES


def test_it_is_told_once_when_the_client_leaves_and_skips_other_messages() -> None:
    async def scenario() -> tuple[list[str], bool]:
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        gone: list[str] = []
        watch = DisconnectWatch(queue.get, lambda: gone.append("gone"))
        await queue.put({"type": "http.request", "body": b"", "more_body": False})
        await asyncio.sleep(0)
        before = list(gone)
        await queue.put({"type": "http.disconnect"})
        await asyncio.wait_for(watch.left(), 1.0)
        return before + gone, watch.gone

    assert asyncio.run(scenario()) == (["gone"], True)


def test_a_client_already_gone_is_seen_at_once() -> None:
    async def scenario() -> list[str]:
        async def receive() -> dict[str, Any]:
            return {"type": "http.disconnect"}

        gone: list[str] = []
        DisconnectWatch(receive, lambda: gone.append("gone"))
        return gone  # before anything else runs

    assert asyncio.run(scenario()) == ["gone"]


def test_a_failing_receive_counts_as_gone() -> None:
    async def scenario() -> list[str]:
        async def receive() -> dict[str, Any]:
            await asyncio.sleep(0)
            raise OSError("the connection broke")

        gone: list[str] = []
        watch = DisconnectWatch(receive, lambda: gone.append("gone"))
        await asyncio.wait_for(watch.left(), 1.0)
        return gone

    assert asyncio.run(scenario()) == ["gone"]


def test_stopping_closes_the_receive_under_way() -> None:
    async def scenario() -> tuple[list[str], list[str]]:
        event = asyncio.Event()
        closed: list[str] = []

        async def receive() -> dict[str, Any]:
            try:
                await event.wait()
                return {"type": "http.disconnect"}
            finally:
                closed.append("closed")

        gone: list[str] = []
        watch = DisconnectWatch(receive, lambda: gone.append("gone"))
        watch.stop()
        event.set()
        await asyncio.sleep(0.01)
        return closed, gone

    assert asyncio.run(scenario()) == (["closed"], [])


def test_a_message_that_came_just_before_stopping_starts_no_other_receive() -> None:
    # The reply ends (uvicorn then wakes its receive) and the watch is stopped before the loop has
    # stepped the watch on: the step already scheduled must not start a receive() that nobody closes.
    async def scenario() -> tuple[int, list[str], bool]:
        event = asyncio.Event()
        calls: list[int] = []

        async def receive() -> dict[str, Any]:
            calls.append(1)
            await event.wait()
            event.clear()  # as uvicorn's receive does
            return {"type": "http.request", "body": b"", "more_body": False}

        gone: list[str] = []
        watch = DisconnectWatch(receive, lambda: gone.append("gone"))
        event.set()  # the waiting future is done: the watch's next step is scheduled
        watch.stop()
        for _ in range(5):
            await asyncio.sleep(0)
        return len(calls), gone, watch.gone

    assert asyncio.run(scenario()) == (1, [], False)


# -- On uvicorn's own request cycle (CycleWatch), as `serve` runs it --------------------------------


class _Transport:
    def __init__(self) -> None:
        self.paused = True  # reading paused: the watch must resume it, as uvicorn's receive() does

    def write(self, data: bytes) -> None:
        pass

    def close(self) -> None:
        pass

    def is_closing(self) -> bool:
        return False

    def pause_reading(self) -> None:
        self.paused = True

    def resume_reading(self) -> None:
        self.paused = False


def _cycle() -> tuple[RequestResponseCycle, _Transport]:
    transport = _Transport()
    flow = FlowControl(transport)  # type: ignore[arg-type]
    flow.read_paused = True
    cycle = RequestResponseCycle(
        scope={"method": "POST", "path": "/v1/chat/completions", "query_string": b"", "http_version": "1.1"},  # type: ignore[typeddict-item]
        transport=transport,  # type: ignore[arg-type]
        flow=flow,
        logger=logging.getLogger("test"),
        access_logger=logging.getLogger("test.access.off"),
        access_log=False,
        default_headers=[],
        message_event=asyncio.Event(),
        expect_100_continue=False,
        keep_alive=True,
        on_response=lambda: None,
    )
    return cycle, transport


def _writer(cycle: RequestResponseCycle) -> transport.DirectWriter:
    writer = transport._direct_writer(cycle.send)
    assert writer is not None
    return writer


def _lose_connection(cycle: RequestResponseCycle) -> None:
    """uvicorn's own ``connection_lost``, on a protocol holding ``cycle``."""
    protocol = _Protocol()
    protocol.__dict__.update(
        connections=set(),
        logger=logging.getLogger("test"),
        client=None,
        cycle=cycle,
        flow=cycle.flow,
        transport=cycle.transport,
        _unset_keepalive_if_required=lambda: None,
        parser=None,
    )
    HttpToolsProtocol.connection_lost(protocol, None)  # type: ignore[arg-type]


class _Protocol:
    """What uvicorn's ``connection_lost`` reads of its protocol (set on it by :func:`_lose_connection`)."""


def test_a_cycle_watch_is_told_once_when_uvicorn_loses_the_connection() -> None:
    async def scenario() -> tuple[bool, list[str], list[str], bool, int]:
        cycle, transport = _cycle()
        gone: list[str] = []
        watch = watch_client(cycle.receive, _writer(cycle), lambda subject: gone.append(subject), "stream")
        assert isinstance(watch, CycleWatch)
        resumed = not transport.paused
        _lose_connection(cycle)
        before = list(gone)  # not inside uvicorn's connection_lost: on the loop's next turn
        await asyncio.wait_for(watch.left(), 1.0)
        watch.stop()
        return resumed, before, gone, watch.gone, len(cycle.message_event._waiters)

    assert asyncio.run(scenario()) == (True, [], ["stream"], True, 0)


def test_a_cycle_watch_sees_a_client_already_gone_at_once() -> None:
    async def scenario() -> list[str]:
        cycle, _ = _cycle()
        _lose_connection(cycle)
        gone: list[str] = []
        watch_client(cycle.receive, _writer(cycle), gone.append, "stream")
        return gone  # before anything else runs

    assert asyncio.run(scenario()) == ["stream"]


def test_a_cycle_watch_stopped_before_its_wake_does_nothing_and_leaves_the_event() -> None:
    async def scenario() -> tuple[list[str], int]:
        cycle, _ = _cycle()
        gone: list[str] = []
        watch = watch_client(cycle.receive, _writer(cycle), gone.append, "stream")
        _lose_connection(cycle)  # the wake is on its way
        watch.stop()
        for _ in range(5):
            await asyncio.sleep(0)
        return gone, len(cycle.message_event._waiters)

    assert asyncio.run(scenario()) == ([], 0)


def test_a_cycle_watch_waits_on_after_another_message_and_a_receive_beside_it_works() -> None:
    # uvicorn sets the event for a message that is not the end (more body): the watch clears it, as
    # receive() does, and waits for the next; a receive() that was waiting first gets its message.
    async def scenario() -> tuple[list[str], dict[str, Any], list[str]]:
        cycle, _ = _cycle()
        receiving = asyncio.ensure_future(cycle.receive())
        await asyncio.sleep(0)
        gone: list[str] = []
        watch_client(cycle.receive, _writer(cycle), gone.append, "stream")
        cycle.body += b"x"
        cycle.message_event.set()
        message = await asyncio.wait_for(receiving, 1.0)
        for _ in range(3):
            await asyncio.sleep(0)
        before = list(gone)
        _lose_connection(cycle)
        for _ in range(3):
            await asyncio.sleep(0)
        return before, dict(message), gone

    assert asyncio.run(scenario()) == ([], {"type": "http.request", "body": b"x", "more_body": True}, ["stream"])


def test_a_cycle_watch_lets_go_of_a_body_nobody_reads_as_receive_would() -> None:
    async def scenario() -> tuple[bytes, bool, list[str]]:
        cycle, transport = _cycle()
        gone: list[str] = []
        watch_client(cycle.receive, _writer(cycle), gone.append, "stream")
        cycle.body += b"more"
        cycle.flow.pause_reading()  # uvicorn pauses reading past its high-water mark
        cycle.message_event.set()
        for _ in range(3):
            await asyncio.sleep(0)
        return bytes(cycle.body), transport.paused, gone

    assert asyncio.run(scenario()) == (b"", False, [])


def test_the_running_server_watches_its_streams_on_uvicorn_s_cycle_and_sees_a_client_leave(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    watches: list[object] = []
    make = disconnect_watch.watch_client

    def counted(*args: Any) -> Any:
        watch = make(*args)
        watches.append(watch)
        return watch

    monkeypatch.setattr(sse, "watch_client", counted)
    with MockServer(seed=1) as server:
        body = json.dumps({"model": "gpt-5.6-sol", "messages": MESSAGES, "stream": True}).encode()
        head = (
            f"POST /v1/chat/completions HTTP/1.1\r\nhost: mock\r\ncontent-type: application/json\r\n"
            f"authorization: Bearer sk-mock-preview\r\nx-mock-ttft-ms: 60000\r\ncontent-length: {len(body)}\r\n\r\n"
        ).encode()
        with socket.create_connection(("127.0.0.1", server.port)) as client:
            client.sendall(head + body)
            assert client.recv(4096).startswith(b"HTTP/1.1 200")
            deadline = time.monotonic() + 10
            while not server.state.streams.active and time.monotonic() < deadline:
                time.sleep(0.01)
            assert len(server.state.streams.active) == 1
        deadline = time.monotonic() + 10
        while server.state.streams.active and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not server.state.streams.active  # the stream ended as its client left, not at its first token
        (call,) = server.calls()
    assert [type(watch) for watch in watches] == [CycleWatch]
    assert call.status == 200 and call.disconnected
