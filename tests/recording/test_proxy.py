"""``mockserver record``: forwarding, streaming pass-through, what is and is not written."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path

import anthropic
import httpx
import openai
import pytest

from mockserver import MockServer
from mockserver.cassettes import files
from mockserver.cassettes.figures import figures
from mockserver.testing.recorder import RecordingProxy
from tests.conftest import PREVIEW_KEY
from tests.recording.foreign import FOREIGN_KEY, WORDS, Foreign

OPUS = "claude-opus-4-8"
HAIKU = [{"role": "user", "content": "Write a haiku about tide pools."}]


_OPEN: list[openai.OpenAI | anthropic.Anthropic] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _OPEN:
        _OPEN.pop().close()


def _client(base_url: str, key: str = PREVIEW_KEY) -> openai.OpenAI:
    client = openai.OpenAI(base_url=base_url, api_key=key, max_retries=0, _strict_response_validation=True)
    _OPEN.append(client)
    return client


def _claude(base_url: str, key: str = PREVIEW_KEY) -> anthropic.Anthropic:
    client = anthropic.Anthropic(base_url=base_url, api_key=key, max_retries=0, _strict_response_validation=True)
    _OPEN.append(client)
    return client


def test_chat_stream_and_not_are_recorded_through_the_openai_sdk(upstream: MockServer, record) -> None:
    proxy = record(upstream.url)
    client = _client(proxy.base_url)
    streamed = client.chat.completions.create(
        model="gpt-5.6-sol", messages=HAIKU, stream=True, stream_options={"include_usage": True}, max_tokens=40
    )
    text = "".join(c.choices[0].delta.content or "" for c in streamed if c.choices)
    whole = client.chat.completions.create(model="gpt-5.6-sol", messages=HAIKU, max_tokens=40)

    records = files.load(_settled(proxy)).records
    assert [r.response.stream for r in records] == [True, False]
    stream, plain = records
    assert stream.api == "chat.completions" and stream.request.body["messages"] == HAIKU
    assert stream.events[-1].data == "[DONE]" if hasattr(stream, "events") else True
    events = stream.response.events
    assert events[-1].data == "[DONE]"
    assert (
        "".join(
            json.loads(e.data)["choices"][0]["delta"].get("content") or ""
            for e in events[:-1]
            if json.loads(e.data)["choices"]
        )
        == text
    )
    offsets = [e.ms for e in events]
    assert offsets == sorted(offsets) and offsets[0] >= stream.response.headers_ms
    assert plain.response.body["choices"][0]["message"]["content"] == whole.choices[0].message.content
    assert plain.response.headers["content-type"].startswith("application/json")
    assert "x-ratelimit-remaining-requests" in plain.response.headers
    shown = figures(stream)
    assert (shown.model, shown.tier, shown.output_tokens) == ("gpt-5.6-sol", "default", 40)


def test_an_anthropic_stream_with_thinking_is_recorded(upstream: MockServer, record) -> None:
    proxy = record(upstream.url)
    client = _claude(proxy.url)
    with client.messages.stream(
        model=OPUS,
        max_tokens=2048,
        messages=[{"role": "user", "content": "Hello"}],
        thinking={"type": "enabled", "budget_tokens": 1024},
    ) as stream:
        message = stream.get_final_message()
    (recorded,) = files.load(_settled(proxy)).records
    assert recorded.api == "messages" and recorded.request.headers["anthropic-version"]
    kinds = [e.event for e in recorded.response.events]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    assert "thinking_delta" in "".join(e.data for e in recorded.response.events)
    assert figures(recorded).output_tokens == message.usage.output_tokens


def test_a_foreign_upstream_is_recorded_as_it_framed_its_stream(foreign: tuple[Foreign, str], record) -> None:
    _, url = foreign
    proxy = record(url)
    with httpx.stream(
        "POST",
        f"{proxy.base_url}/chat/completions",
        headers={"authorization": f"Bearer {FOREIGN_KEY}"},
        json={"model": "foreign-1", "messages": HAIKU, "stream": True},
    ) as through:
        relayed = b"".join(through.iter_raw())
        assert through.headers["x-foreign"] == "yes"  # every upstream header reaches the client
    with httpx.stream(
        "POST",
        f"{url}/v1/chat/completions",
        headers={"authorization": f"Bearer {FOREIGN_KEY}"},
        json={"model": "foreign-1", "messages": HAIKU, "stream": True},
    ) as direct:
        assert relayed == b"".join(direct.iter_raw())  # byte for byte: comments, \r\n and all

    (recorded,) = files.load(_settled(proxy)).records
    events = recorded.response.events
    assert len(events) == 1 + len(WORDS) + 3  # comments dropped, split events joined
    assert json.loads(events[1].data)["id"] == "chatcmpl-foreign-7"
    assert recorded.response.headers["x-request-id"] == "req_foreign_1"
    assert "x-foreign" not in recorded.response.headers  # only the headers a client reads
    assert figures(recorded).output_tokens == len(WORDS)
    # The first text arrives after the foreign TTFT, each next word about one step later.
    assert figures(recorded).ttft_ms >= 100
    assert events[-2].ms - events[1].ms >= 20 * (len(WORDS) - 1) * 0.9


def test_no_credential_is_ever_written(foreign: tuple[Foreign, str], upstream: MockServer, record) -> None:
    _, url = foreign
    proxy = record(url, record_errors=True)
    wrong = "sk-wrong-key-abcdefghijklmnop1234"
    headers = {
        "openai-organization": "org-secretorg123",
        "openai-project": "proj_secretproject9",
        "cookie": "session=cookiesecret99",
        "x-api-key": "xk-also-secret-42",
        "api-key": "azure-secret-key-77",
    }
    for key in (FOREIGN_KEY, wrong):
        with pytest.raises(openai.AuthenticationError) if key == wrong else _nothing():
            _client(proxy.base_url, key).with_options(default_headers=headers).chat.completions.create(
                model="foreign-1", messages=HAIKU
            )
    mock_proxy = record(upstream.url, name="mock.jsonl", record_errors=True)
    with pytest.raises(openai.AuthenticationError):
        _client(mock_proxy.base_url, "sk-mock-not-a-real-key-9876").models.list()
    _client(mock_proxy.base_url).models.list()

    written = _settled(proxy).read_text() + _settled(mock_proxy).read_text()
    assert len(files.load(_settled(proxy)).records) == 2 and len(files.load(_settled(mock_proxy)).records) == 2
    for secret in [FOREIGN_KEY, wrong, "sk-mock-not-a-real-key-9876", PREVIEW_KEY, "Bearer", "9876", *headers.values()]:
        assert secret not in written, secret
    assert "[redacted]" in written  # the 401's masked key was replaced


def test_redact_patterns_replace_content(foreign: tuple[Foreign, str], record) -> None:
    _, url = foreign
    proxy = record(url, redact=[r"tide pools", r"\bsalt\b"])
    client = _client(proxy.base_url, FOREIGN_KEY)
    "".join(
        c.choices[0].delta.content or ""
        for c in client.chat.completions.create(model="foreign-1", messages=HAIKU, stream=True)
        if c.choices
    )
    written = _settled(proxy).read_text()
    assert "tide pools" not in written and " salt" not in written and written.count("[redacted]") == 2


def test_errors_are_passed_on_and_recorded_only_when_asked(foreign: tuple[Foreign, str], record) -> None:
    _, url = foreign
    proxy = record(url)
    with pytest.raises(openai.AuthenticationError) as denied:
        _client(proxy.base_url, "sk-not-it-0000000000").chat.completions.create(model="foreign-1", messages=HAIKU)
    assert denied.value.body["code"] == "invalid_api_key"  # the upstream's own error
    assert not _settled(proxy).exists()


def test_an_unreachable_upstream_gets_a_502_in_the_apis_shape(record) -> None:
    proxy = record("http://127.0.0.1:9")  # the discard port: nothing listens
    with pytest.raises(openai.APIStatusError) as chat:
        _client(proxy.base_url).chat.completions.create(model="gpt-5.6-sol", messages=HAIKU)
    assert chat.value.status_code == 502 and chat.value.body["type"] == "server_error"
    assert "could not be reached" in chat.value.body["message"]
    claude = _claude(proxy.url, "x")
    with pytest.raises(anthropic.APIStatusError) as messages:
        claude.messages.create(model=OPUS, max_tokens=10, messages=[{"role": "user", "content": "hi"}])
    assert messages.value.status_code == 502
    assert messages.value.body == {
        "type": "error",
        "error": {"type": "api_error", "message": chat.value.body["message"]},
    }
    assert not _settled(proxy).exists()


def test_concurrent_exchanges_never_interleave(foreign: tuple[Foreign, str], record) -> None:
    _, url = foreign
    proxy = record(url)

    async def one(client: openai.AsyncOpenAI, n: int) -> None:
        stream = await client.chat.completions.create(
            model="foreign-1", messages=[{"role": "user", "content": str(n)}], stream=True
        )
        async for _ in stream:
            pass

    async def all_at_once() -> None:
        async with openai.AsyncOpenAI(base_url=proxy.base_url, api_key=FOREIGN_KEY, max_retries=0) as client:
            await asyncio.gather(*(one(client, n) for n in range(20)))

    asyncio.run(all_at_once())
    records = files.load(_settled(proxy)).records
    assert sorted(r.request.body["messages"][0]["content"] for r in records) == sorted(str(n) for n in range(20))
    assert all(len(r.response.events) == len(WORDS) + 4 for r in records)


def test_the_size_bound_stops_recording_not_serving(foreign: tuple[Foreign, str], record) -> None:
    _, url = foreign
    first = record(url)
    _client(first.base_url, FOREIGN_KEY).chat.completions.create(model="foreign-1", messages=HAIKU)
    size = _settled(first).stat().st_size
    bounded = record(url, max_cassette_bytes=size + size // 2)  # room for half a record more
    client = _client(bounded.base_url, FOREIGN_KEY)
    for _ in range(3):
        assert client.chat.completions.create(model="foreign-1", messages=HAIKU).choices[0].message.content
    assert _settled(bounded).stat().st_size == size
    assert len(files.load(bounded.cassette).records) == 1


def test_a_client_leaving_mid_stream_closes_the_upstream_and_records_nothing(
    foreign: tuple[Foreign, str], record
) -> None:
    upstream, url = foreign
    before = upstream.closed_early
    proxy = record(url)
    with httpx.stream(
        "POST",
        f"{proxy.base_url}/chat/completions",
        headers={"authorization": f"Bearer {FOREIGN_KEY}"},
        json={"model": "foreign-1", "messages": HAIKU, "stream": True, "n_repeat": 50},
    ) as reply:
        next(reply.iter_raw())
    for _ in range(500):  # the proxy sees the client gone, then closes the upstream reply
        if upstream.closed_early > before:
            break
        time.sleep(0.02)
    assert upstream.closed_early == before + 1
    assert not _settled(proxy).exists()


def _settled(proxy: RecordingProxy) -> Path:
    proxy.settle()
    return proxy.cassette


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return False


def test_torn_last_record_is_dropped_on_load_and_cut_before_appending(
    foreign: tuple[Foreign, str], record, tmp_path: Path
) -> None:
    _, url = foreign
    proxy = record(url)
    _client(proxy.base_url, FOREIGN_KEY).chat.completions.create(model="foreign-1", messages=HAIKU)
    whole = _settled(proxy).read_bytes()
    proxy.cassette.write_bytes(whole + whole[: len(whole) // 2])  # a crash in the middle of the second write
    with pytest.warns(files.TornRecordWarning, match=r"session.jsonl:2: the last record is incomplete"):
        assert len(files.load(_settled(proxy)).records) == 1
    with pytest.warns(files.TornRecordWarning):
        _client(proxy.base_url, FOREIGN_KEY).chat.completions.create(model="foreign-1", messages=HAIKU)
    assert len(files.load(_settled(proxy)).records) == 2
