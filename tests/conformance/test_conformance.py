"""The generator against the shapes of real recorded replies (tests/conformance/shapes.json).

Each entry holds a request's features (its texts left out) and the paths and event types every real
reply to such a request had. The test sends the request, with a prompt of its own, to a real server
and fails on a refusal, a missing path or a missing event type, unless known_differences.json lists
it with its reason; it also fails when a listed difference is gone, so that the list only shrinks.
Both files are rewritten by ``python -m tests.conformance.derive`` (see its docstring).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mockserver import MockServer
from mockserver.recording.conformance.send import Sender
from tests.conformance.check import SERVER_OPTIONS, differences, sender_for
from tests.conformance.derive import KNOWN, SHAPES, derive_shapes, skeleton
from tests.conformance.features import features

ENTRIES: list[dict[str, Any]] = json.loads(SHAPES.read_text(encoding="utf-8"))["entries"]
KNOWN_ENTRIES: dict[str, Any] = json.loads(KNOWN.read_text(encoding="utf-8"))["entries"]
REGENERATE = "if the generator now sends it, rewrite the list: python -m tests.conformance.derive known"


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, dict | list):
        for child in value.values() if isinstance(value, dict) else value:
            yield from strings(child)
    elif isinstance(value, str):
        yield value


@pytest.fixture(scope="module")
def sender() -> Iterator[Sender]:
    with MockServer(**SERVER_OPTIONS) as server, sender_for(server) as sending:
        yield sending


def test_the_data_names_its_sources_and_holds_no_recorded_text() -> None:
    assert len(ENTRIES) > 100
    for entry in ENTRIES:
        assert entry["sources"], entry["id"]
        for source in entry["sources"]:
            assert source["repo"] and len(source["commit"]) == 40 and source["path"] and source["interaction"] >= 0
        assert entry["paths"], entry["id"]
        assert entry["features"]["stream"] == bool(entry["events"]), entry["id"]
        for text in strings(entry["request"]):  # identifiers, enum values, schema refs, our placeholders: no prose
            assert not re.search(r"\s", text), (entry["id"], text)
    assert set(KNOWN_ENTRIES) <= {e["id"] for e in ENTRIES}


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: f"{e['endpoint'].rsplit('/', 1)[1]}-{e['id']}")
def test_reply_has_every_recorded_path_and_event_type(sender: Sender, entry: dict[str, Any]) -> None:
    found = differences(sender, entry)
    known = KNOWN_ENTRIES.get(entry["id"], {"paths": {}, "events": {}})
    sources = ", ".join(f"{s['repo']}:{s['path']}#{s['interaction']}" for s in entry["sources"][:2])
    if found.refused:
        assert known.get("refused"), f"refused: {found.refused} (recorded: {sources})"
        return
    assert not known.get("refused"), f"no longer refused; {REGENERATE}"
    new_paths = [p for p in found.paths if p not in known["paths"]]
    new_events = [e for e in found.events if e not in known["events"]]
    assert not new_events, f"event types of the recorded streams not sent: {new_events} (recorded: {sources})"
    assert not new_paths, f"recorded paths missing from the reply: {new_paths} (recorded: {sources})"
    gone = sorted(set(known["paths"]) - set(found.paths)) + sorted(set(known["events"]) - set(found.events))
    assert not gone, f"listed as known differences but now produced: {gone[:8]}; {REGENERATE}"


def test_the_derived_request_keeps_the_features_and_drops_every_text() -> None:
    request = {
        "instructions": "You are a pirate.",
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "Where is the treasure?"},
                                         {"type": "input_image", "image_url": "data:image/jpeg;base64,/9jPICTURE"}]},
            {"type": "function_call", "call_id": "call_7", "name": "dig", "arguments": '{"spot": "under the palm"}'},
            {"type": "function_call_output", "call_id": "call_7", "output": "A chest full of gold."},
        ],
        "tools": [{"type": "function", "name": "dig", "description": "Dig for it.",
                   "parameters": {"type": "object", "properties": {"spot": {"type": "string", "description": "Spot"}}}},
                  {"type": "web_search", "search_context_size": "medium"}],
        "tool_choice": "required",
        "reasoning": {"effort": "high", "summary": "auto"},
        "metadata": {"crew": "Black Pearl"},
    }  # fmt: skip
    kept = skeleton(request)
    text = json.dumps(kept)
    for secret in ("pirate", "treasure", "palm", "gold", "Dig for", "Spot", "Black Pearl", "PICTURE"):
        assert secret not in text
    assert kept["input"][1] == {"type": "function_call", "call_id": "call_7", "name": "dig", "arguments": "{}"}
    assert kept["input"][2]["call_id"] == "call_7" and kept["input"][0]["content"][0]["text"] == "<text>"
    assert kept["tools"][0]["parameters"] == {"type": "object", "properties": {"spot": {"type": "string"}}}
    assert kept["tools"][1] == request["tools"][1] and kept["reasoning"] == request["reasoning"]
    assert features("/v1/responses", True, request) == {
        "stream": True,
        "tools": ["function", "web_search"],
        "tool_choice": "required",
        "items": ["message:user", "  input_image", "function_call", "function_call_output"],
        "reasoning": {"effort": "high", "summary": "auto"},
        "other": ["metadata"],
    }


def test_an_entry_keeps_the_paths_every_reply_of_its_features_had(tmp_path: Path) -> None:
    def record(index: int, question: str, reply: dict[str, Any]) -> dict[str, Any]:
        return {"repo": "example/app", "commit": "1" * 40, "path": "cassettes/a.yaml", "interaction": index,
                "endpoint": "/v1/embeddings", "stream": False, "request": {"model": "m", "input": question},
                "response": reply}  # fmt: skip

    corpus = tmp_path / "corpus.jsonl"
    lines = [record(0, "first", {"data": [], "usage": {"total_tokens": 1}}), record(1, "second", {"data": []})]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    (entry,) = derive_shapes(corpus)["entries"]
    assert entry["paths"] == {"data": "array"}
    assert [s["interaction"] for s in entry["sources"]] == [0, 1]
    assert entry["request"] == {"input": "<text>"} and entry["features"] == {"stream": False, "items": ["text"]}
