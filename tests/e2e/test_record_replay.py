"""Record through the proxy from a real server, then replay offline: the official SDKs see the same replies.

The upstream is a ``mockserver serve`` in a thread (default tiers and the Claude Opus preset); the
replaying server knows nothing of it but the cassette.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from mockserver import MockServer
from mockserver.cassettes import files
from mockserver.testing.recorder import RecordingProxy
from tests.conftest import PREVIEW_KEY

MODEL = "gpt-5.6-sol"
OPUS = "claude-opus-4-8"
HAIKU = [{"role": "user", "content": "Write a haiku about tide pools."}]
WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
    "strict": True,
}

_OPEN: list[Any] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _OPEN:
        _OPEN.pop().close()


def _openai(base_url: str) -> openai.OpenAI:
    client = openai.OpenAI(base_url=base_url, api_key=PREVIEW_KEY, max_retries=0, _strict_response_validation=True)
    _OPEN.append(client)
    return client


def _claude(url: str) -> anthropic.Anthropic:
    client = anthropic.Anthropic(base_url=url, api_key=PREVIEW_KEY, max_retries=0, _strict_response_validation=True)
    _OPEN.append(client)
    return client


@pytest.fixture(scope="module")
def upstream() -> Iterator[MockServer]:
    with MockServer(time_scale=0, seed=11, presets=["claude-opus-4.8-fast"]) as running:
        yield running


@pytest.fixture
def recorded(upstream: MockServer, tmp_path: Path) -> Callable[[Callable[[str, str], Any]], tuple[Path, Any]]:
    """Run ``session(openai_base_url, root_url)`` through a recording proxy; the cassette and what it returned."""

    def run(session: Callable[[str, str], Any]) -> tuple[Path, Any]:
        with RecordingProxy(upstream.url, tmp_path / "session.jsonl") as proxy:
            result = session(proxy.base_url, proxy.url)
        return proxy.cassette, result

    return run


def _replaying(cassette: Path, **options: Any) -> MockServer:
    options.setdefault("time_scale", 0)
    return MockServer(replay=[str(cassette)], presets=["claude-opus-4.8-fast"], seed=99, **options)


def _chat_session(base_url: str, _: str) -> tuple[str, Any, Any]:
    client = _openai(base_url)
    stream = client.chat.completions.create(
        model=MODEL, messages=HAIKU, stream=True, stream_options={"include_usage": True}, max_tokens=60
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    whole = client.chat.completions.create(model=MODEL, messages=HAIKU, max_tokens=30)
    return text, chunks[-1].usage, whole


def test_chat_streamed_and_not_replays_the_recorded_text_and_usage(recorded) -> None:
    cassette, (text, usage, whole) = recorded(_chat_session)
    with _replaying(cassette) as server:
        replay_text, replay_usage, replay_whole = _chat_session(server.base_url, server.url)
        assert (replay_text, replay_usage) == (text, usage)
        assert replay_whole.choices[0].message.content == whole.choices[0].message.content
        assert replay_whole.usage == whole.usage and replay_whole.id == whole.id
        # Either shape answers either request: the streamed recording, asked for whole, and the reverse.
        client = _openai(server.base_url)
        folded = client.chat.completions.create(
            model=MODEL, messages=HAIKU, max_tokens=60, stream_options=None, stream=False
        )
        assert folded.choices[0].message.content == text and folded.usage == usage
        unfolded = client.chat.completions.create(model=MODEL, messages=HAIKU, max_tokens=30, stream=True)
        assert "".join(c.choices[0].delta.content or "" for c in unfolded) == whole.choices[0].message.content
        # Everything else acts as for a generated reply: the journal and the ledger saw them.
        assert server.requests.filter(path="/v1/chat/completions").call_count == 4
        assert server.run(server.state.store.usage())


def _responses_tool_session(base_url: str, _: str) -> tuple[Any, Any]:
    client = _openai(base_url)
    with client.responses.stream(
        model=MODEL, input="Weather in Paris?", tools=[WEATHER], tool_choice="required"
    ) as stream:
        first = stream.get_final_response()
    call = next(item for item in first.output if item.type == "function_call")
    with client.responses.stream(
        model=MODEL,
        previous_response_id=first.id,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": '{"temp": 21}'}],
        tools=[WEATHER],
    ) as stream:
        second = stream.get_final_response()
    return first, second


def test_a_responses_stream_with_a_tool_call_round_trip_replays(recorded) -> None:
    cassette, (first, second) = recorded(_responses_tool_session)
    assert len(files.load(cassette).records) == 2
    with _replaying(cassette) as server:
        again_first, again_second = _responses_tool_session(server.base_url, server.url)
    call, again_call = first.output[-1], again_first.output[-1]
    assert (again_call.name, again_call.arguments, again_call.call_id) == (call.name, call.arguments, call.call_id)
    assert again_second.output_text == second.output_text and again_second.usage == second.usage
    assert again_first.usage == first.usage


def _thinking_session(_: str, root: str) -> Any:
    with _claude(root).messages.stream(
        model=OPUS,
        max_tokens=2048,
        thinking={"type": "enabled", "budget_tokens": 1024},
        messages=[{"role": "user", "content": "Why is the sea salty?"}],
    ) as stream:
        return stream.get_final_message()


def test_an_anthropic_stream_with_thinking_replays(recorded) -> None:
    cassette, message = recorded(_thinking_session)
    assert message.content[0].type == "thinking"
    with _replaying(cassette) as server:
        again = _thinking_session(server.base_url, server.url)
        whole = _claude(server.url).messages.create(
            model=OPUS, max_tokens=2048, thinking={"type": "enabled", "budget_tokens": 1024},
            messages=[{"role": "user", "content": "Why is the sea salty?"}],
        )  # fmt: skip
    assert again.content == message.content and again.usage == message.usage and again.id == message.id
    shown = [b.model_dump(exclude={"parsed_output"}) for b in message.content]  # the stream helper's extra field
    assert [b.model_dump() for b in whole.content] == shown
    assert whole.usage.output_tokens == message.usage.output_tokens


def test_a_miss_names_the_nearest_recording_and_the_first_field_that_differs(recorded) -> None:
    cassette, _ = recorded(_chat_session)
    with _replaying(cassette) as server:
        client = _openai(server.base_url)
        with pytest.raises(openai.BadRequestError) as missed:
            client.chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": "Write a haiku about rock pools."}], max_tokens=30
            )
    error = missed.value
    assert error.code == "no_recording" and error.param == "messages.0.content"
    assert f"{cassette}:2" in error.message and files.load(cassette).records[1].id in error.message
    assert '"Write a haiku about rock pools."' in error.message and '"Write a haiku about tide pools."' in error.message


def test_a_miss_can_generate_instead(recorded) -> None:
    cassette, _ = recorded(_chat_session)
    with _replaying(cassette, replay_miss="generate") as server:
        reply = _openai(server.base_url).chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "x"}]
        )
    assert reply.choices[0].message.content


def test_identical_requests_replay_in_order_and_each_test_id_has_its_own(recorded) -> None:
    def session(base_url: str, _: str) -> list[str]:
        client = _openai(base_url)
        return [
            client.chat.completions.create(model=MODEL, messages=HAIKU, seed=n).choices[0].message.content or ""
            for n in (1, 2)
        ]

    def twice(base_url: str) -> list[str]:
        client = _openai(base_url)
        return [
            client.chat.completions.create(model=MODEL, messages=HAIKU).choices[0].message.content or ""
            for _ in range(3)
        ]

    cassette, replies = recorded(session)
    assert replies[0] != replies[1]
    # The seed is part of the body; ignored, the two recordings become one key with two replies.
    with _replaying(cassette, time_scale=0) as server:
        server.configure(replay_ignore=["seed"])
        assert twice(server.base_url) == [replies[0], replies[1], replies[1]]  # the last repeats
        alone = _openai(server.base_url).with_options(default_headers={"x-mock-test-id": "other"})
        assert alone.chat.completions.create(model=MODEL, messages=HAIKU).choices[0].message.content == replies[0]


def test_tier_timing_answers_an_ultrafast_request_from_a_standard_recording(recorded) -> None:
    cassette, (text, usage, _) = recorded(_chat_session)
    with _replaying(cassette, replay_timing="tier") as server:
        client = _openai(server.base_url)
        stream = client.chat.completions.create(
            model=MODEL, messages=HAIKU, stream=True, stream_options={"include_usage": True}, max_tokens=60,
            service_tier="ultrafast",
        )  # fmt: skip
        chunks = list(stream)
        assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == text
        shown = server.state.fixture.policies.chat_ultrafast_service_tier  # what a generated Chat reply shows
        assert {c.service_tier for c in chunks} == {shown} and chunks[-1].usage == usage
        [entry] = server.requests.filter(path="/v1/chat/completions")
        assert entry.data["tier"] == "ultrafast"


def test_the_cassette_can_be_set_at_runtime_and_a_bad_one_is_refused(recorded, tmp_path: Path) -> None:
    cassette, (text, _, _) = recorded(_chat_session)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"version": 1, "id": "x"}\n')
    with MockServer(time_scale=0) as server:
        patched = httpx.patch(f"{server.url}/_mock/config", json={"replay": [str(bad)]})
        assert patched.status_code == 400 and patched.json()["error"]["param"] == "replay"
        assert f"{bad}:1: " in patched.json()["error"]["message"]
        assert httpx.patch(f"{server.url}/_mock/config", json={"replay": [str(cassette)]}).status_code == 200
        stream = _openai(server.base_url).chat.completions.create(
            model=MODEL, messages=HAIKU, stream=True, stream_options={"include_usage": True}, max_tokens=60
        )
        assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == text
    from mockserver.config.fixture import ConfigError

    with pytest.raises(ConfigError, match=rf"^replay: {bad}:1: "):
        MockServer(replay=[str(bad)])


def test_recorded_timing_follows_the_recording(tmp_path: Path) -> None:
    """A generous real-clock check (the machine is shared); benchmarks/load/replay.py measures it closely."""
    with MockServer(time_scale=1, seed=4) as slow, RecordingProxy(slow.url, tmp_path / "t.jsonl") as proxy:
        client = _openai(proxy.base_url).with_options(
            default_headers={"x-mock-tokens-per-second": "100", "x-mock-ttft-ms": "300"}
        )
        list(client.chat.completions.create(model=MODEL, messages=HAIKU, stream=True, max_tokens=40))
    [record] = files.load(proxy.cassette).records
    with _replaying(proxy.cassette, time_scale=1) as server:
        started = _now()
        first = None
        for chunk in _openai(server.base_url).chat.completions.create(
            model=MODEL, messages=HAIKU, stream=True, max_tokens=40
        ):
            if first is None and chunk.choices and chunk.choices[0].delta.content:
                first = _now() - started
        total = _now() - started
    recorded_ttft = next(
        e.ms for e in record.response.events if '"content":"' in e.data and '"content":""' not in e.data
    )
    assert first is not None and abs(first * 1000 - recorded_ttft) < 0.5 * recorded_ttft
    assert abs(total * 1000 - record.response.duration_ms) < 0.5 * record.response.duration_ms


def _now() -> float:
    import time

    return time.perf_counter()


def test_events_keep_their_recorded_names_and_data(recorded) -> None:
    cassette, _ = recorded(_responses_tool_session)
    [first, _] = files.load(cassette).records
    with _replaying(cassette) as server, httpx.stream(
        "POST", f"{server.base_url}/responses", headers={"authorization": f"Bearer {PREVIEW_KEY}"},
        json=first.request.body,
    ) as reply:  # fmt: skip
        text = reply.read().decode()
    names = [line.removeprefix("event: ") for line in text.splitlines() if line.startswith("event: ")]
    assert names == [e.event for e in first.response.events]
    assert [json.loads(line.removeprefix("data: ")) for line in text.splitlines() if line.startswith("data: ")] == [
        json.loads(e.data) for e in first.response.events
    ]
