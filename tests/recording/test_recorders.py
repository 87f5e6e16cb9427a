"""The recorders of replay misses: each upstream client is closed once its recorder goes and is idle."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from starlette.requests import Request
from starlette.types import Message, Scope

from mockserver.cassettes.files import CassetteWriter
from mockserver.cassettes.redaction import Redactor
from mockserver.recording.capture import Capture
from mockserver.recording.proxy import Recorder, forward
from mockserver.recording.recorders import RECORDERS_KEPT, Recorders
from mockserver.recording.upstream import Upstream


def _recorders(tmp_path: Path, kept: int) -> Recorders:
    def make(upstream: str, cassette: str, redact: list[str]) -> Recorder:
        transport = httpx.MockTransport(lambda request: httpx.Response(200, json={}))
        return Recorder(Upstream(upstream, transport=transport), CassetteWriter(tmp_path / cassette), Redactor(redact))

    return Recorders(kept, make=make)


def test_the_same_upstream_and_cassette_get_the_same_recorder_and_the_default_bound_holds(tmp_path: Path) -> None:
    async def run() -> None:
        recorders = _recorders(tmp_path, RECORDERS_KEPT)
        first = await recorders.get("http://up", "a.jsonl", [])
        assert await recorders.get("http://up", "a.jsonl", []) is first
        for n in range(RECORDERS_KEPT):
            await recorders.get("http://up", f"{n}.jsonl", [])
        assert len(recorders) == RECORDERS_KEPT and first.upstream.closed

    asyncio.run(run())
    assert Recorders().kept == RECORDERS_KEPT


def test_an_idle_recorder_evicted_is_closed_and_the_least_recently_used_goes_first(tmp_path: Path) -> None:
    async def run() -> None:
        recorders = _recorders(tmp_path, 2)
        a = await recorders.get("http://up", "a.jsonl", [])
        b = await recorders.get("http://up", "b.jsonl", [])
        assert await recorders.get("http://up", "a.jsonl", []) is a  # a used last: b goes first
        c = await recorders.get("http://up", "c.jsonl", [])
        assert b.upstream.closed and not a.upstream.closed and not c.upstream.closed
        assert len(recorders) == 2

    asyncio.run(run())


def test_a_busy_recorder_evicted_closes_when_its_last_exchange_ends(tmp_path: Path) -> None:
    async def run() -> None:
        recorders = _recorders(tmp_path, 1)
        a = await recorders.get("http://up", "a.jsonl", [])
        a.in_flight = 2  # two streams still relayed through it
        await recorders.get("http://up", "b.jsonl", [])
        assert a.retired and not a.upstream.closed
        await a.exchange_ended()
        assert not a.upstream.closed
        await a.exchange_ended()
        assert a.upstream.closed

    asyncio.run(run())


def test_closing_closes_every_recorder_busy_or_not(tmp_path: Path) -> None:
    async def run() -> None:
        recorders = _recorders(tmp_path, 1)
        a = await recorders.get("http://up", "a.jsonl", [])
        a.in_flight = 1
        b = await recorders.get("http://up", "b.jsonl", [])
        b.in_flight = 1
        await recorders.aclose()
        assert a.upstream.closed and b.upstream.closed and len(recorders) == 0

    asyncio.run(run())


def test_an_upstream_reply_that_cannot_be_relayed_ends_its_exchange(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def reply(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={})

    def broken(*args: object) -> None:
        raise RuntimeError("cannot be relayed")

    monkeypatch.setattr(Capture, "response_started", broken)

    async def run() -> None:
        upstream = Upstream("http://up", transport=httpx.MockTransport(reply))
        recorder = Recorder(upstream, CassetteWriter(tmp_path / "a.jsonl"), Redactor())
        with pytest.raises(RuntimeError):
            await forward(recorder, Request(_SCOPE), b"{}")
        assert recorder.settled()  # counted out: a recorder let go closes its upstream client
        await recorder.retire()
        assert recorder.upstream.closed

    asyncio.run(run())


def test_a_header_value_outside_latin1_is_relayed_as_its_utf8_bytes(tmp_path: Path) -> None:
    def reply(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers=[(b"x-note", "price in €".encode())], json={})

    async def run() -> None:
        upstream = Upstream("http://up", transport=httpx.MockTransport(reply))
        recorder = Recorder(upstream, CassetteWriter(tmp_path / "a.jsonl"), Redactor())
        relayed = await forward(recorder, Request(_SCOPE), b"{}")
        assert (b"x-note", "price in €".encode()) in relayed.raw_headers
        sent: list[Message] = []

        async def send(message: Message) -> None:
            sent.append(message)

        async def receive() -> Message:
            await asyncio.sleep(10)
            return {"type": "http.disconnect"}

        await relayed(_SCOPE, receive, send)
        assert (b"x-note", "price in €".encode()) in sent[0]["headers"]
        assert recorder.settled() and recorder.recorded == 1

    asyncio.run(run())


_SCOPE: Scope = {"type": "http", "method": "POST", "path": "/v1/chat/completions", "query_string": b"", "headers": []}
