"""``mockserver conformance``: a small corpus made up here, sent to the generators the command starts."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mockserver.cli import main
from mockserver.recording.conformance import pairs, shapes
from mockserver.recording.conformance.compare import Reply, compare
from mockserver.recording.conformance.measure import measure

REPO = "example/agents"
COMMIT = "0" * 40
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


def line(index: int, endpoint: str, request: dict[str, Any], **reply: Any) -> dict[str, Any]:
    stream = "events" in reply
    return {"repo": REPO, "commit": COMMIT, "path": f"tests/cassettes/case_{index}.yaml", "interaction": 0,
            "endpoint": endpoint, "stream": stream, "request": {"model": "gpt-4o", "stream": stream, **request},
            **reply}  # fmt: skip


def chat_reply(**extra: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4o",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Sunny."},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
        **extra,
    }


CORPUS = [
    line(0, shapes.CHAT, {"messages": [{"role": "user", "content": "Weather in Paris?"}]},
         response=chat_reply(surprise_field={"kind": "made up"})),
    line(1, shapes.CHAT, {"messages": [{"role": "user", "content": "Weather in Paris?"}], "tools": [WEATHER_TOOL],
                          "tool_choice": "required"}, response=chat_reply()),
    line(2, shapes.CHAT, {"messages": "not a list"}, response=chat_reply()),
    line(3, shapes.RESPONSES, {"input": "Say hi."}, events=[
        {"event": "response.created", "data": {"type": "response.created", "sequence_number": 0}},
        {"event": "response.made_up_event", "data": {"type": "response.made_up_event", "sequence_number": 1}},
    ]),
    line(4, shapes.MESSAGES, {"max_tokens": 64, "messages": [{"role": "user", "content": "Say hi."}]},
         response={"id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
                   "content": [{"type": "text", "text": "Hi."}], "stop_reason": "end_turn", "stop_sequence": None,
                   "usage": {"input_tokens": 3, "output_tokens": 2}}),
]  # fmt: skip


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("conformance") / "corpus.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in CORPUS), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def run(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any]]:
    """The command as a user runs it: it starts its own generators, prints the table, writes the JSON."""
    report = tmp_path_factory.mktemp("report") / "conformance.json"
    done = subprocess.run(
        [sys.executable, "-m", "mockserver", "conformance", str(corpus), "--json", str(report)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout, json.loads(report.read_text(encoding="utf-8"))


def test_the_table_has_a_row_per_mode_and_names_where_each_difference_was_recorded(run: tuple[str, Any]) -> None:
    table, _ = run
    rows = {r.split("  ")[0]: r.split() for r in table.splitlines() if r.startswith(("Chat ", "Responses", "Messages"))}
    assert set(rows) == {"Chat", "Responses streamed", "Messages"}
    assert rows["Chat"][1:3] == ["3", "1"]  # pairs, refused
    assert "surprise_field" in table and f"{REPO}:tests/cassettes/case_0.yaml#0" in table
    assert "response.made_up_event (x1, e.g. example/agents:tests/cassettes/case_3.yaml#0)" in table
    assert f"e.g. {REPO}:tests/cassettes/case_2.yaml#0" in table  # the refusal
    assert "conformance: coverage" in table.splitlines()[-1]


def test_json_holds_every_pair_and_the_figures_of_the_table(run: tuple[str, Any]) -> None:
    _, report = run
    assert [p["source"] for p in report["per_pair"]] == [
        f"{REPO}:tests/cassettes/case_{i}.yaml#0" for i in range(len(CORPUS))
    ]
    chat = report["groups"]["chat plain"]
    assert (chat["pairs"], chat["answered"], len(chat["refused"])) == (3, 2, 1)
    assert ["surprise_field", 1] in chat["never_produced"] and ["surprise_field.kind", 1] in chat["never_produced"]
    assert chat["forced"] == 1 and chat["forced_ignored"] == []  # a forced call on the first turn is made
    first = report["per_pair"][0]
    assert first["missing"] == ["surprise_field", "surprise_field.kind"]
    assert first["coverage"] == round(100 * first["covered"] / first["real_paths"], 1)
    stream = report["groups"]["responses stream"]
    assert stream["missing_event_types"] == [["response.made_up_event", 1]]
    assert report["models"]["anthropic"].startswith("claude")
    assert report["groups"]["messages plain"]["answered"] == 1


def test_shapes_tag_typed_items_and_keep_caller_values_opaque() -> None:
    reply = {"output": [{"type": "function_call", "arguments": "{}", "parameters": {"a": 1}}], "n": None}
    assert dict(shapes.flatten(reply)) == {
        "output": {"array"},
        "output[]<function_call>": {"object"},
        "output[]<function_call>.type": {"string"},
        "output[]<function_call>.arguments": {"string"},
        "output[]<function_call>.parameters": {"object"},
        "n": {"null"},
    }
    events = [shapes.Event("message_start", {"type": "message_start", "delta": {"type": "text_delta", "x": True}})]
    assert dict(shapes.stream_shape(events, shapes.MESSAGES, done=True)) == {
        "message_start .": {"event"},
        "message_start @event-line": {"match"},
        "message_start type": {"string"},
        "message_start delta<text_delta>": {"object"},
        "message_start delta<text_delta>.type": {"string"},
        "message_start delta<text_delta>.x": {"boolean"},
        "[DONE] .": {"event"},
    }


def test_coverage_is_pooled_over_paths_not_averaged_over_pairs() -> None:
    def pair(index: int, response: dict[str, Any]) -> pairs.Pair:
        return pairs.Pair(f"case#{index}", shapes.EMBEDDINGS, {"input": "x"}, False, response=response)

    small = pair(0, {"a": 1, "b": 2})  # 2 paths, 1 covered
    large = pair(1, {"a": 1, "c": {"d": 1, "e": 2}})  # 4 paths, 4 covered
    replies = {"case#0": {"a": 0}, "case#1": {"a": 0, "c": {"d": 0, "e": 0}}}
    result = measure([small, large], lambda p: Reply(200, body=replies[p.source]))
    assert result.groups["embeddings plain"].coverage() == pytest.approx(100 * 5 / 6)
    assert compare(small, Reply(200, body={"a": "text"})).mismatch == [("a", "number", "string")]


@dataclass(frozen=True)
class Interaction:  # the fields of mockserver.cassettes.vcr.VcrInteraction that conformance reads
    source: str
    method: str
    host: str
    path: str
    request_json: Any
    status: int
    response_json: Any
    sse_events: list[tuple[str | None, str]] | None


@dataclass(frozen=True)
class Skip:
    source: str
    reason: str


@dataclass(frozen=True)
class Load:
    interactions: list[Interaction]
    skipped: list[Skip]


def test_inputs_that_cannot_be_used_get_one_line(corpus: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"repo": "x"}\n', encoding="utf-8")
    assert main(["conformance", str(broken)]) == 2
    assert main(["conformance", str(corpus), "--openai", "http://127.0.0.1:9"]) == 2


OPENAI = "api.openai.com"


def test_vcr_interactions_become_pairs_and_the_rest_are_skipped_with_a_reason() -> None:
    stream = [("response.created", '{"type": "response.created"}'), (None, "[DONE]")]
    load = Load(
        [
            Interaction("a.yaml#0", "POST", OPENAI, "/v1/chat/completions", {"messages": []}, 200, chat_reply(), None),
            Interaction("a.yaml#1", "POST", OPENAI, "/v1/responses?x=1", {"input": "hi"}, 200, None, stream),
            Interaction("a.yaml#2", "POST", OPENAI, "/v1/chat/completions", {"messages": []}, 429, {"error": {}}, None),
            Interaction("a.yaml#3", "GET", OPENAI, "/v1/models", None, 200, {"data": []}, None),
            Interaction("a.yaml#4", "POST", OPENAI, "/v1/responses", {"previous_response_id": "resp_1"}, 200, {}, None),
            Interaction("a.yaml#5", "POST", "localhost", "/v1/chat/completions", {"messages": []}, 200, {}, None),
        ],
        [Skip("b.yaml", "not a cassette")],
    )
    found = pairs.pairs_from_vcr(load)
    assert [(p.source, p.endpoint, p.stream, p.query) for p in found.pairs] == [
        ("a.yaml#0", shapes.CHAT, False, ""),
        ("a.yaml#1", shapes.RESPONSES, True, "x=1"),
    ]
    assert found.pairs[1].done and found.pairs[1].events == (
        shapes.Event("response.created", {"type": "response.created"}),
    )
    assert [s.source for s in found.skipped] == ["b.yaml", "a.yaml#2", "a.yaml#3", "a.yaml#4", "a.yaml#5"]
    assert "429" in found.skipped[1].reason and "previous_response_id" in found.skipped[3].reason
    assert "localhost" in found.skipped[4].reason
