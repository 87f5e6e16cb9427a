"""VCR cassettes replayed as they are: recorded here by vcrpy from the official SDKs' own traffic to a
running mockserver (streams included), then served by ``--replay`` and checked by the SDKs, strict."""

from __future__ import annotations

import gzip
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import brotli
import httpx
import httpx2
import openai
import pytest
import vcr
import yaml

from mockserver import MockServer
from mockserver.cassettes.vcr import BROTLI_MISSING, read_vcr
from mockserver.cli import main
from mockserver.config.fixture import ConfigError
from mockserver.config.settings import Settings
from mockserver.engine.pacing import FakeClock
from mockserver.server.app import create_app

KEY = "sk-mock-standard"
CLAUDE = "claude-opus-4-8"  # the model id of the claude-opus-4.8-fast preset
CHAT = {"model": "gpt-5.6-mini", "messages": [{"role": "user", "content": "Name three rivers."}]}
STREAMED = {"model": "gpt-5.6-mini", "messages": [{"role": "user", "content": "Count to five."}]}
MESSAGE = {"model": CLAUDE, "max_tokens": 200, "messages": [{"role": "user", "content": "Say hello."}]}
RESPONSE = {"model": "gpt-5.6-mini", "input": "Describe a lake."}


def openai_client(base: str, http_client: Any = None) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{base}/v1", api_key=KEY, max_retries=0, _strict_response_validation=True,
                         http_client=http_client)  # fmt: skip


class ThroughHttpx(httpx2.BaseTransport):
    """An ``httpx2`` transport that sends through a legacy ``httpx`` client: the SDKs built on ``httpx2``
    refuse an ``httpx`` client, and ``httpx`` is what vcrpy records."""

    def __init__(self, client: httpx.Client) -> None:
        self.client = client

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        sent = self.client.request(request.method, str(request.url), headers=list(request.headers.multi_items()),
                                   content=request.read())  # fmt: skip
        headers = [(k, v) for k, v in sent.headers.multi_items() if k.lower() != "content-encoding"]
        return httpx2.Response(sent.status_code, headers=headers, content=sent.content)


def anthropic_client(base: str, http_client: Any = None) -> anthropic.Anthropic:
    bridged = httpx2.Client(transport=ThroughHttpx(http_client)) if http_client is not None else None
    return anthropic.Anthropic(base_url=base, api_key=KEY, max_retries=0, _strict_response_validation=True,
                               http_client=bridged)  # fmt: skip


def session(base: str, http_client: Any = None) -> dict[str, Any]:
    """One of each kind of call, through the SDKs (the stream helpers too), and what each answered."""
    chat, claude = openai_client(base, http_client), anthropic_client(base, http_client)
    whole = chat.chat.completions.create(**CHAT)
    chunks = [c.model_dump() for c in chat.chat.completions.create(**STREAMED, stream=True)]
    with chat.responses.stream(**RESPONSE) as events:
        response = events.get_final_response()
    vectors = chat.embeddings.create(model="text-embedding-3-small", input="a lake", encoding_format="float")
    message = claude.messages.create(**MESSAGE)
    with claude.messages.stream(**{**MESSAGE, "messages": [{"role": "user", "content": "Write a haiku."}]}) as s:
        streamed = s.get_final_message()
    counted = claude.messages.count_tokens(model=CLAUDE, messages=MESSAGE["messages"])
    return {
        "chat": whole.choices[0].message.content,
        "chunks": ["".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])],
        "response": response.output_text,
        "vectors": vectors.data[0].embedding[:8],
        "message": message.content[0].text,  # type: ignore[union-attr]
        "streamed": streamed.content[0].text,  # type: ignore[union-attr]
        "counted": counted.input_tokens,
    }


@pytest.fixture(scope="module")
def upstream() -> Iterator[MockServer]:
    """mockserver as the API that was recorded, with the Claude Opus 4.8 Fast preset."""
    with MockServer(time_scale=0, seed=3, presets=["claude-opus-4.8-fast"]) as running:
        yield running


@pytest.fixture(scope="module", params=["yaml", "json"])
def recorded(request: pytest.FixtureRequest, upstream: MockServer, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A VCR cassette written by vcrpy (its YAML or JSON serializer) while the SDKs talked to the upstream,
    through a legacy ``httpx`` client (what vcrpy patches), and the replies the SDKs got."""
    path = tmp_path_factory.mktemp("vcr") / f"session.{request.param}"
    recorder = vcr.VCR(serializer=request.param, record_mode="all")
    with recorder.use_cassette(str(path)), httpx.Client() as http_client:
        answers = session(upstream.url, http_client)
    return path, answers


def test_vcrpy_cassettes_replay_through_the_sdks_with_no_preset(recorded: Any) -> None:
    path, answers = recorded
    # No preset: the Claude model comes from the cassette itself, and replies are paced at the tier.
    with MockServer(time_scale=0, replay=[str(path)]) as replay:
        assert replay.state.fixture.replay_timing == "tier"
        assert session(replay.url) == answers
        listed = httpx.get(f"{replay.url}/v1/models", headers={"x-api-key": KEY, "anthropic-version": "2023-06-01"})
        assert CLAUDE in [m["id"] for m in listed.json()["data"]]


def test_a_vcr_stream_replays_event_by_event(recorded: Any) -> None:
    path, _ = recorded
    events = next(i.sse_events for i in read_vcr([path]).interactions if i.path == "/v1/messages" and i.sse_events)
    with MockServer(time_scale=0, replay=[str(path)], replay_timing="instant") as replay:
        body = {**MESSAGE, "messages": [{"role": "user", "content": "Write a haiku."}], "stream": True}
        sent = httpx.post(
            f"{replay.url}/v1/messages", json=body, headers={"x-api-key": KEY, "anthropic-version": "2023-06-01"}
        )
        assert sent.status_code == 200, sent.text
    names = [line.removeprefix("event: ") for line in sent.text.splitlines() if line.startswith("event: ")]
    assert names == [name for name, _ in events]


def test_recorded_timing_is_refused_in_one_line(recorded: Any) -> None:
    path, _ = recorded
    with pytest.raises(ConfigError) as refused:
        MockServer(time_scale=0, replay=[str(path)], replay_timing="recorded")
    assert "holds no timing" in str(refused.value)
    assert "\n" not in str(refused.value)


def test_import_then_replay_gives_the_same_replies(recorded: Any, tmp_path: Path) -> None:
    path, answers = recorded
    out = tmp_path / "imported.jsonl"
    assert main(["cassette", "import", str(path), "--out", str(out)]) == 0
    assert KEY not in out.read_text()
    with MockServer(time_scale=0, replay=[str(out)], replay_timing="tier") as replay:
        assert session(replay.url) == answers


def test_cassette_show_check_and_whatif_read_vcr(recorded: Any, capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = recorded
    assert main(["cassette", "check", str(path)]) == 0
    assert "7 interactions served, 0 skipped" in capsys.readouterr().out
    assert main(["cassette", "show", str(path)]) == 0
    assert CLAUDE in capsys.readouterr().out
    assert main(["whatif", str(path), "--preset", "claude-opus-4.8-fast"]) == 0
    shown = capsys.readouterr().out
    assert "5 calls" in shown and "No timing recorded" in shown


def _serializer_shapes(tmp_path: Path) -> Path:
    """A cassette in the shapes project serializers write: a parsed body beside (or instead of) the raw one,
    a gzip body as ``!!binary``, a brotli body, header names in any case, and interactions not served."""
    chat_reply = {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1786000000, "model": "gpt-5.6-mini",
        "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                     "message": {"role": "assistant", "content": "Nile, Amazon, Yangtze.", "refusal": None}}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 7, "total_tokens": 16},
    }  # fmt: skip
    message_reply = {
        "id": "msg_1", "type": "message", "role": "assistant", "model": CLAUDE, "stop_reason": "end_turn",
        "stop_sequence": None, "content": [{"type": "text", "text": "Hello."}],
        "usage": {"input_tokens": 9, "output_tokens": 2},
    }  # fmt: skip
    counted = {"input_tokens": 9}
    interactions = [
        {
            "request": {"method": "POST", "uri": "https://api.openai.com/v1/chat/completions",
                        "headers": {"Authorization": ["Bearer sk-proj-recordedsecret1234"]}, "parsed_body": CHAT},
            "response": {"status": {"code": 200, "message": "OK"},
                         "headers": {"Content-Type": ["application/json"]}, "parsed_body": chat_reply},
        },
        {
            "request": {"method": "POST", "uri": "https://api.anthropic.com/v1/messages?beta=true",
                        "headers": {"x-api-key": ["sk-ant-recordedsecret"]}, "body": json.dumps(MESSAGE)},
            "response": {"status": {"code": 200, "message": "OK"},
                         "headers": {"content-type": ["application/json"], "content-encoding": ["gzip"]},
                         "body": {"string": gzip.compress(json.dumps(message_reply).encode())}},
        },
        {
            "request": {"method": "POST", "uri": "https://api.anthropic.com/v1/messages/count_tokens",
                        "headers": {}, "body": json.dumps({"model": CLAUDE, "messages": MESSAGE["messages"]})},
            "response": {"status": {"code": 200, "message": "OK"},
                         "headers": {"content-type": ["application/json"], "content-encoding": ["br"]},
                         "body": {"string": brotli.compress(json.dumps(counted).encode())}},
        },
        {
            "request": {"method": "GET", "uri": "https://api.openai.com/v1/models", "headers": {}, "body": None},
            "response": {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": "{}"}},
        },
        {
            "request": {"method": "POST", "uri": "https://api.example.com/v1/chat/completions", "headers": {},
                        "body": json.dumps(CHAT)},
            "response": {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": "{}"}},
        },
    ]  # fmt: skip
    path = tmp_path / "shapes.yaml"
    path.write_text(yaml.safe_dump({"interactions": interactions, "version": 1}))
    return path


def test_serializer_shapes_are_read_and_the_rest_is_listed(tmp_path: Path) -> None:
    path = _serializer_shapes(tmp_path)
    assert "!!binary" in path.read_text()
    load = read_vcr([tmp_path / "*.yaml"])
    assert [(i.path, i.status) for i in load.interactions] == [
        ("/v1/chat/completions", 200), ("/v1/messages", 200), ("/v1/messages/count_tokens", 200)
    ]  # fmt: skip
    assert load.interactions[2].response_json == {"input_tokens": 9}
    assert [s.reason for s in load.skipped] == [
        "GET /v1/models: not an inference endpoint",
        "POST api.example.com/v1/chat/completions: not the OpenAI or Anthropic API",
    ]
    with MockServer(time_scale=0, replay=[str(tmp_path)]) as replay:
        chat = openai_client(replay.url).chat.completions.create(**CHAT)
        claude = anthropic_client(replay.url)
        message = claude.messages.create(**MESSAGE)
        counted = claude.messages.count_tokens(model=CLAUDE, messages=MESSAGE["messages"])
    assert chat.choices[0].message.content == "Nile, Amazon, Yangtze."
    assert message.content[0].text == "Hello."  # type: ignore[union-attr]
    assert counted.input_tokens == 9
    imported = tmp_path / "imported.jsonl"
    assert main(["cassette", "import", str(path), "--out", str(imported)]) == 0
    assert "recordedsecret" not in imported.read_text()
    assert len(imported.read_text().splitlines()) == 3


def test_a_brotli_body_without_the_vcr_extra_is_skipped_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _serializer_shapes(tmp_path)
    monkeypatch.setitem(sys.modules, "brotli", None)  # as without `pip install "mockserver[vcr]"`
    load = read_vcr([path])
    assert [i.path for i in load.interactions] == ["/v1/chat/completions", "/v1/messages"]
    assert (f"{path}#2", BROTLI_MISSING) in [(s.source, s.reason) for s in load.skipped]
    assert "mockserver[vcr]" in BROTLI_MISSING


def test_access_rules_still_apply_to_the_keys_the_fixture_knows(recorded: Any) -> None:
    path, _ = recorded
    with MockServer(time_scale=0, replay=[str(path)]) as replay, pytest.raises(anthropic.AuthenticationError):
        anthropic.Anthropic(base_url=replay.url, api_key="sk-unknown", max_retries=0).messages.create(**MESSAGE)


@pytest.mark.parametrize(("timing", "held_ms"), [("instant", 0.0), ("tier", 100.0)])
def test_a_replayed_embedding_is_held_as_its_timing_says(tmp_path: Path, timing: str, held_ms: float) -> None:
    """On a fake clock: ``tier`` holds the reply for the model's TTFT (100 ms), ``instant`` not at all."""
    asked = {"model": "text-embedding-3-small", "input": "a lake", "encoding_format": "float"}
    reply = {"object": "list", "model": "text-embedding-3-small", "usage": {"prompt_tokens": 2, "total_tokens": 2},
             "data": [{"object": "embedding", "index": 0, "embedding": [0.6, 0.8]}]}  # fmt: skip
    interaction = {
        "request": {"method": "POST", "uri": "https://api.openai.com/v1/embeddings", "body": json.dumps(asked)},
        "response": {"status": {"code": 200}, "headers": {"content-type": ["application/json"]},
                     "body": {"string": json.dumps(reply)}},
    }  # fmt: skip
    path = tmp_path / "embedding.json"
    path.write_text(json.dumps({"interactions": [interaction], "version": 1}))
    settings = Settings(time_scale=1, seed=2, port=0, replay=(str(path),), replay_timing=timing)
    with MockServer(settings, app=create_app(settings, clock=FakeClock())) as server:
        sent = httpx.post(f"{server.url}/v1/embeddings", json=asked, headers={"authorization": f"Bearer {KEY}"})
        assert sent.json() == reply
        (call,) = server.requests
    assert call.duration_ms == pytest.approx(held_ms, abs=0.2)


def test_check_refuses_a_yaml_file_that_is_no_vcr_cassette(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "fixture.yaml"
    other.write_text("extends: default\n")
    assert main(["cassette", "check", str(other)]) == 2
    assert "not a VCR cassette" in capsys.readouterr().err
