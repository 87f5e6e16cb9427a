"""Send one entry of ``shapes.json`` to a server and list what its reply lacks of the recorded shape.

The request is the entry's, with the test's own prompt wherever the recorded request had text; it is
sent as ``mockserver conformance`` sends a recorded one (the model and the key changed), and its reply
is compared by the same code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mockserver import MockServer
from mockserver.recording.conformance.compare import compare_shapes, shape_of
from mockserver.recording.conformance.pairs import Pair
from mockserver.recording.conformance.send import Sender, Target
from mockserver.recording.conformance.shapes import Shape, event_types

PROMPT = "Look up the status of order 42 with the tools you have, then answer in JSON if JSON is asked for."
TEXT = "<text>"
CLAUDE_PRESET = "claude-opus-4.8-fast"
SERVER_OPTIONS: dict[str, Any] = {"time_scale": 0, "seed": 1, "presets": (CLAUDE_PRESET,)}

# Why a path or event type is missing, by the first fragment of it that matches (see known_differences.json).
REASONS = (
    ("refused", "refused although the live API answered 200"),
    ("obfuscation", "stream obfuscation (stream_options.include_obfuscation) is not sent"),
    ("generate_summary", "a field of replies recorded before mid-2025; today's replies name it summary"),
    ("sources[]<api>", "a search source of type api (a data provider); the SDK types url sources only"),
    ("action.url", "a search that opens or searches a page (open_page, find_in_page) is not simulated"),
    ("web_search", "hosted or server tool (web search) is not simulated"),
    ("web_fetch", "server tool (web fetch) is not simulated"),
    ("image_generation", "hosted tool (image generation) is not simulated"),
    ("tool_search", "hosted or server tool (tool search) is not simulated"),
    ("code_execution", "server tool (code execution) is not simulated"),
    ("advisor", "server tool (advisor) is not simulated"),
    ("server_tool_use", "server tools are not simulated"),
    ("citation", "cited text from a search tool is not simulated"),
    ("annotation", "cited text from a search tool is not simulated"),
    ("<reasoning>", "no reasoning output item where the real model sends one"),
    ("reasoning.", "the reasoning settings in force are not echoed as live"),
    ("tool_calls", "no tool call where the recorded reply made one"),
    ("<function_call>", "no tool call where the recorded reply made one"),
    ("function_call_arguments", "no tool call where the recorded reply made one"),
    ("<tool_use>", "no tool_use block where the recorded reply made one"),
    ("input_json_delta", "no tool_use block where the recorded reply made one"),
    ("<thinking>", "no thinking block where the recorded reply had one"),
    ("thinking_delta", "no thinking block where the recorded reply had one"),
    ("signature_delta", "no thinking block where the recorded reply had one"),
    ("inference_geo", "a usage field of current Anthropic replies is not sent"),
    ("cache_creation", "a usage field of current Anthropic replies is not sent"),
    ("stop_details", "a field of current Anthropic replies is not sent"),
    ("caller", "a field of current Anthropic replies is not sent"),
    ("moderation", "moderation results are not sent"),
    ("billing", "a field of current Responses replies is not sent"),
    ("completed_at", "a field of current Responses replies is not sent"),
    ("penalty", "a field of current Responses replies is not sent"),
    ("prompt_cache_retention", "a field of current Responses replies is not sent"),
    ("max_tool_calls", "a field of current Responses replies is not sent"),
    ("verbosity", "a field of current Responses replies is not sent"),
    ("tool_usage", "a field of current Responses replies is not sent"),
    ("phase", "a field of current Responses replies is not sent"),
    ("tools[]", "the tools echo differs from the tools sent"),
    ("refusal", "no refusal text where the recorded reply refused"),
    ("logprobs", "log probabilities are not sent"),
    ("thinking_tokens", "a usage field of current Anthropic replies is not sent"),
    ("iterations", "a usage field of current Anthropic replies is not sent"),
    ("redacted_thinking", "no redacted_thinking block where the recorded reply had one"),
    ("compaction", "context management's compaction is not simulated"),
    ("text.format", "the text format echo differs from the format sent"),
    ("<text>", "no text block where the recorded reply had one (a tool call came instead)"),
    ("text_delta", "no text block where the recorded reply had one (a tool call came instead)"),
    ("<message>", "no message item where the recorded reply had one (a tool call came instead)"),
)
OTHER_REASON = "not produced for this request"


def reason(what: str) -> str:
    return next((why for fragment, why in REASONS if fragment in what), OTHER_REASON)


@dataclass
class Differences:
    refused: str | None = None  # "STATUS message"
    paths: list[str] = field(default_factory=list)
    events: list[str] = field(default_factory=list)

    def as_known(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.refused:
            out["refused"] = {"status": self.refused, "why": reason("refused")}
        out["paths"] = {p: reason(p) for p in self.paths}
        out["events"] = {e: reason(e) for e in self.events}
        return out


def with_prompt(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: with_prompt(v) for k, v in value.items()}
    if isinstance(value, list):
        return [with_prompt(v) for v in value]
    return PROMPT if value == TEXT else value


def pair_of(entry: dict[str, Any]) -> Pair:
    return Pair(
        source=entry["id"],
        endpoint=entry["endpoint"],
        request=with_prompt(entry["request"]),
        stream=entry["features"]["stream"],
        query=entry["query"],
        anthropic_version=entry.get("anthropic_version"),
    )


def expected_shape(entry: dict[str, Any]) -> Shape:
    return {p: set(t.split("|")) for p, t in entry["paths"].items()}


def differences(sender: Sender, entry: dict[str, Any]) -> Differences:
    pair = pair_of(entry)
    reply = sender.send(pair)
    if not reply.answered:
        return Differences(refused=f"{reply.status} {reply.error}")
    mock = shape_of(pair.endpoint, pair.stream, reply.body, reply.events, reply.done)
    missing, _, _ = compare_shapes(expected_shape(entry), mock)
    events = sorted(set(entry["events"]) - event_types(reply.events, pair.endpoint))
    return Differences(paths=missing, events=events)


def sender_for(server: MockServer) -> Sender:
    return Sender(Target(server.url, server.url))


def known_differences(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """What the current server lacks for each entry, sent in order to a fresh server as the test does."""
    found: dict[str, Any] = {}
    with MockServer(**SERVER_OPTIONS) as server, sender_for(server) as sender:
        for entry in entries:
            known = differences(sender, entry).as_known()
            if known.get("refused") or known["paths"] or known["events"]:
                found[entry["id"]] = known
    return {
        "about": "What the generator does not produce yet of the recorded shapes, per entry of shapes.json, each "
        "with the reason; the conformance test passes over these and fails on any other difference. Rewrite it "
        "with `python -m tests.conformance.derive known` when the generator changes.",
        "entries": found,
    }
