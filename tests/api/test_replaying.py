"""Replay misses recorded through ``--upstream``: each recorder's connections close once it is let go."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import openai
import pytest

from mockserver import MockServer
from mockserver.api.replaying import RECORDERS, recorders
from mockserver.cassettes import files
from mockserver.recording.proxy import Recorder
from mockserver.recording.recorders import Recorders
from tests.conftest import PREVIEW_KEY

MODEL = "gpt-5.6-sol"
HAIKU = [{"role": "user", "content": "Write a haiku about tide pools."}]
SLOW = {"x-mock-tokens-per-second": "30", "x-mock-ttft-ms": "20"}  # a reply of 60 to 90 tokens lasts 2 to 3 s


@pytest.fixture(scope="module")
def upstream() -> Iterator[MockServer]:
    with MockServer(time_scale=1, seed=5) as running:
        yield running


@pytest.fixture
def cassettes(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.touch()
    b.touch()
    return a, b


def _recording(upstream: MockServer, cassette: Path) -> MockServer:
    return MockServer(replay=[str(cassette)], replay_miss="record", upstream=upstream.url, time_scale=0)


def _client(server: MockServer) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=server.base_url,
        api_key=PREVIEW_KEY,
        max_retries=0,
        default_headers=SLOW,
        _strict_response_validation=True,
    )


def _eventually(condition: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + 10
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _only_one_kept(server: MockServer, upstream: MockServer, cassette: Path) -> Recorder:
    """The server keeps one recorder (the bound made small), and the one for ``cassette`` is made now."""
    server.state.resources[RECORDERS] = Recorders(kept=1)
    return server.run(recorders(server.state).get(upstream.url, str(cassette), []))


def test_a_recorder_let_go_mid_stream_finishes_the_stream_then_closes(
    upstream: MockServer, cassettes: tuple[Path, Path]
) -> None:
    a, b = cassettes
    with _recording(upstream, a) as server, _client(server) as client:
        first = _only_one_kept(server, upstream, a)
        chunks = iter(client.chat.completions.create(model=MODEL, messages=HAIKU, stream=True, max_tokens=90))
        head = next(chunks)
        assert httpx.patch(f"{server.url}/_mock/config", json={"replay": [str(b)]}).status_code == 200
        whole = client.chat.completions.create(model=MODEL, messages=HAIKU, max_tokens=5)  # recorded into b
        assert whole.choices[0].message.content
        assert first.retired and not first.upstream.closed  # its stream still runs through it
        rest = list(chunks)
        assert [c for c in [head, *rest] if c.choices][-1].choices[0].finish_reason in ("stop", "length")  # whole
        assert _eventually(lambda: first.upstream.closed)
        second = server.run(recorders(server.state).get(upstream.url, str(b), []))
        assert not second.upstream.closed
    assert second.upstream.closed  # closed when the server stopped
    assert [r.response.stream for r in files.load(a).records] == [True]
    assert [r.response.stream for r in files.load(b).records] == [False]


def test_a_client_leaving_a_stream_of_a_recorder_let_go_closes_it_and_records_nothing(
    upstream: MockServer, cassettes: tuple[Path, Path]
) -> None:
    a, b = cassettes
    with _recording(upstream, a) as server:
        first = _only_one_kept(server, upstream, a)
        body = {"model": MODEL, "messages": HAIKU, "stream": True, "max_tokens": 90}
        headers = {"authorization": f"Bearer {PREVIEW_KEY}", **SLOW}
        with httpx.stream("POST", f"{server.base_url}/chat/completions", json=body, headers=headers) as reply:
            assert reply.status_code == 200
            lines = reply.iter_lines()  # kept: a generator let go closes the connection
            assert next(lines).startswith("data: ")
            assert httpx.patch(f"{server.url}/_mock/config", json={"replay": [str(b)]}).status_code == 200
            server.run(recorders(server.state).get(upstream.url, str(b), []))  # lets the first go
            assert first.retired and not first.upstream.closed  # the client is still reading
        assert _eventually(lambda: first.upstream.closed and first.settled())
    assert files.load(a).records == []


def test_a_redaction_pattern_configured_while_running_applies_to_the_next_miss_recorded(
    upstream: MockServer, cassettes: tuple[Path, Path]
) -> None:
    cassette, _ = cassettes
    fast = {"x-mock-tokens-per-second": "5000", "x-mock-ttft-ms": "0"}
    with _recording(upstream, cassette) as server, _client(server) as client:
        ask = client.with_options(default_headers=fast).chat.completions.create
        ask(model=MODEL, messages=[{"role": "user", "content": "A haiku about the harbour."}])
        server.configure(redact=["harbour"])
        ask(model=MODEL, messages=[{"role": "user", "content": "A haiku about the harbour at dusk."}])
    first, second = cassette.read_text().splitlines()
    assert "harbour" in first
    assert "harbour" not in second and "[redacted] at dusk" in second
