"""The proxy relays the upstream's reply headers as sent, and replays the recorded ones the same way."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import orjson
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from mockserver.cassettes import files
from mockserver.testing.recorder import RecordingProxy
from tests.recording.conftest import Threaded
from tests.recording.foreign import FOREIGN_KEY, _completion

WORDS = ["Salt", " and", " light", "."]
COOKIES = [b"__cf_bm=abc123; path=/; HttpOnly", b"_cfuvid=def456; path=/; HttpOnly"]
NOTE = "café ☕ naïve"  # outside Latin-1: sent as its UTF-8 bytes
REQUEST_ID = "req_☕_1"


class Upstream:
    """Answers a Chat Completion with the live API's two ``set-cookie`` lines, a header outside Latin-1
    and a rate-limit header sent twice."""

    def __init__(self) -> None:
        self.requests = 0
        self.app = Starlette(routes=[Route("/v1/chat/completions", self.chat, methods=["POST"])])

    async def chat(self, request: Request) -> Response:
        self.requests += 1
        reply = Response(orjson.dumps(_completion(WORDS)), media_type="application/json")
        reply.raw_headers += [(b"set-cookie", cookie) for cookie in COOKIES]
        if request.query_params.get("plain"):  # only headers in Latin-1
            return reply
        reply.raw_headers += [
            (b"x-note", NOTE.encode()),
            (b"x-request-id", REQUEST_ID.encode()),
            (b"x-ratelimit-remaining-requests", b"41"),
            (b"x-ratelimit-remaining-requests", b"40"),
        ]
        return reply


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[Upstream, str]]:
    app = Upstream()
    with Threaded(app.app) as running:
        yield app, running.url


def _ask(base_url: str, query: str = "") -> httpx.Response:
    return httpx.post(
        f"{base_url}/chat/completions{query}",
        headers={"authorization": f"Bearer {FOREIGN_KEY}"},
        json={"model": "foreign-1", "messages": [{"role": "user", "content": "Hi"}]},
    )


def test_repeated_headers_stay_separate_lines(upstream: tuple[Upstream, str], tmp_path: Path) -> None:
    _, url = upstream
    with RecordingProxy(url, tmp_path / "session.jsonl") as proxy:
        reply = _ask(proxy.base_url, "?plain=1")
    assert reply.status_code == 200
    assert reply.headers.get_list("set-cookie") == [c.decode() for c in COOKIES]


def test_every_header_line_is_relayed_as_sent(upstream: tuple[Upstream, str], tmp_path: Path) -> None:
    _, url = upstream
    with RecordingProxy(url, tmp_path / "session.jsonl") as proxy:
        reply = _ask(proxy.base_url)
        assert reply.status_code == 200
        raw = reply.headers.raw
        assert [v for k, v in raw if k == b"set-cookie"] == COOKIES
        assert [v for k, v in raw if k == b"x-note"] == [NOTE.encode()]
        assert [v for k, v in raw if k == b"x-ratelimit-remaining-requests"] == [b"41", b"40"]
        assert reply.headers["x-request-id"] == REQUEST_ID
        assert reply.json()["choices"][0]["message"]["content"] == "".join(WORDS)

        client = openai.OpenAI(base_url=proxy.base_url, api_key=FOREIGN_KEY, max_retries=0)
        with client:
            relayed = client.chat.completions.with_raw_response.create(
                model="foreign-1", messages=[{"role": "user", "content": "Hi"}]
            )
        assert relayed.headers.get_list("set-cookie") == [c.decode() for c in COOKIES]
        assert relayed.headers["x-note"] == NOTE
        assert relayed.parse().choices[0].message.content == "".join(WORDS)
        proxy.settle()
    record = files.load(proxy.cassette).records[0]
    headers = record.response.headers
    assert "set-cookie" not in headers  # a credential: never written
    assert headers["x-request-id"] == REQUEST_ID
    assert headers["x-ratelimit-remaining-requests"] == "41, 40"


def test_a_recording_replays_its_headers(upstream: tuple[Upstream, str], tmp_path: Path) -> None:
    app, url = upstream
    cassette = tmp_path / "session.jsonl"
    with RecordingProxy(url, cassette) as proxy:
        assert _ask(proxy.base_url).status_code == 200
    asked = app.requests
    with RecordingProxy(url, cassette, replay_known=True) as proxy:
        reply = _ask(proxy.base_url)
    assert app.requests == asked  # answered from the cassette
    assert reply.status_code == 200
    assert reply.headers["x-request-id"] == REQUEST_ID
    assert reply.headers.get_list("x-ratelimit-remaining-requests") == ["41, 40"]
    assert reply.headers["content-type"] == "application/json"
    assert reply.json()["choices"][0]["message"]["content"] == "".join(WORDS)
