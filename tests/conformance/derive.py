"""Derive the conformance data from a corpus of recorded pairs, and the list of known differences.

    python -m tests.conformance.derive shapes CORPUS.jsonl   # rewrites tests/conformance/shapes.json
    python -m tests.conformance.derive known                 # rewrites tests/conformance/known_differences.json

``shapes`` keeps, for each distinct recorded request, its SHAPE only: the request with every text
(prompts, instructions, descriptions, tool results, earlier replies, arguments, files) replaced by a
marker, so that what remains is its features (the tools and their kinds, ``tool_choice``, formats,
stream options, the input item and block types, reasoning settings, schemas without their prose);
and the shape of the recorded replies: the JSON paths with their types (per event type for streams)
and the event types, those every recorded reply to that request had. Each entry names its sources:
repository, commit, path and interaction index.

``known`` sends every entry to a server as the test does and writes down what it lacks (refusals,
paths, event types), each with the reason: the test passes over those, and fails on anything new.
Run it again when the generator gains fields, so that the list shrinks.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mockserver.recording.conformance.compare import shape_of
from mockserver.recording.conformance.pairs import Pair, read_corpus
from mockserver.recording.conformance.shapes import Shape, collapsed_sequence, event_types
from tests.conformance.features import features

HERE = Path(__file__).resolve().parent
SHAPES = HERE / "shapes.json"
KNOWN = HERE / "known_differences.json"

TEXT = "<text>"  # where a request had text of its own; the test puts its own prompt there
TOKEN = re.compile(r"^[A-Za-z0-9_.:/\-]{1,64}$")  # an identifier or an enum value, kept
LEAF_TEXT = frozenset(
    {"text", "content", "input", "instructions", "system", "description", "arguments", "output", "partial_json",
     "thinking", "signature", "encrypted_content", "data", "url", "file_data", "filename", "title", "query", "prompt",
     "stop", "stop_sequences", "image_url", "user", "file_url", "result", "message", "error"}
)  # fmt: skip
ALL_TEXT = frozenset(
    {"metadata", "input", "arguments", "output", "result", "content"}
)  # a whole value given by callers
SCHEMAS = frozenset({"parameters", "input_schema", "schema", "output_schema"})
PROSE = frozenset({"description", "title", "examples", "default", "$comment"})
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="  # a 1x1 PNG
PDF = "JVBERi0xLjQKJSVFT0YK"  # "%PDF-1.4 %%EOF"
REPLACEMENTS = {
    "arguments": "{}",
    "partial_json": "{}",
    "signature": "c2lnbmF0dXJl",
    "encrypted_content": "ZW5jcnlwdGVk",
    "filename": "document.pdf",
    "stop": "STOP",
    "stop_sequences": "STOP",
    "title": "Title",
    "file_url": "https://example.com/document.pdf",
}


PNG_URL = f"data:image/png;base64,{PNG}"
PDF_URL = f"data:application/pdf;base64,{PDF}"
IMAGE_URL = "https://example.com/image.png"


def placeholder(key: str | None, value: str, parent: dict[str, Any] | None) -> str:
    if key in REPLACEMENTS:
        return REPLACEMENTS[key]
    if key in ("url", "image_url"):
        return PNG_URL if value.startswith("data:image") else IMAGE_URL
    if key in ("data", "file_data"):
        media = str((parent or {}).get("media_type") or "")
        if "pdf" in media or value.startswith("data:application/pdf") or key == "file_data":
            return PDF_URL if value.startswith("data:") else PDF
        return PNG_URL if value.startswith("data:") else PNG
    return TEXT


def skeleton(value: Any, key: str | None = None, parent: dict[str, Any] | None = None, text: bool = False) -> Any:
    """``value`` with its texts replaced by markers, its structure and identifiers kept."""
    if isinstance(value, dict):
        if key in SCHEMAS:
            return without_prose(value)
        inside = text or key in ALL_TEXT
        return {k: skeleton(v, k, value, inside) for k, v in value.items()}
    if isinstance(value, list):  # a list's objects are items of their own; its strings are read as the key's
        return [skeleton(v, None if isinstance(v, dict) else key, parent, text) for v in value]
    if isinstance(value, str):
        if (text and key not in ("type", "role", "id", "call_id", "tool_use_id", "name", "media_type")) or (
            key in LEAF_TEXT
        ):
            return placeholder(key, value, parent)
        return value if TOKEN.match(value) else TEXT
    return value


def without_prose(schema: Any) -> Any:
    """A JSON schema without its descriptions, titles, examples and defaults."""
    if isinstance(schema, dict):
        return {k: without_prose(v) for k, v in schema.items() if not (k in PROSE and not isinstance(v, dict))}
    if isinstance(schema, list):
        return [without_prose(v) for v in schema]
    return schema


def shape_of_pair(pair: Pair) -> Shape:
    return shape_of(pair.endpoint, pair.stream, pair.response, pair.events, pair.done)


def entries(pairs: Iterable[Pair], corpus: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per distinct set of request features: the request of its first source, texts left out, and the
    paths and event types that every recorded reply of the set had."""
    found: dict[str, dict[str, Any]] = {}
    for pair, record in zip(pairs, corpus, strict=True):
        summary = features(pair.endpoint, pair.stream, pair.request)
        signature = json.dumps([pair.endpoint, pair.query, summary], sort_keys=True)
        ident = hashlib.sha256(signature.encode()).hexdigest()[:12]
        shape = shape_of_pair(pair)
        source = {k: record[k] for k in ("repo", "commit", "path", "interaction")}
        kinds = sorted(event_types(pair.events, pair.endpoint)) if pair.stream else []
        if ident in found:
            entry = found[ident]
            entry["sources"].append(source)
            entry["paths"] = {p: t for p, t in entry["paths"].items() if p in shape}
            entry["events"] = [e for e in entry["events"] if e in kinds]
            continue
        found[ident] = {
            "id": ident,
            "endpoint": pair.endpoint,
            "query": pair.query,
            "anthropic_version": pair.anthropic_version,
            "features": summary,
            "sources": [source],
            "request": skeleton({k: v for k, v in pair.request.items() if k != "model"}),
            "events": kinds,
            "sequence": collapsed_sequence(pair.events, pair.endpoint) if pair.stream else [],
            "paths": {p: "|".join(sorted(t)) for p, t in sorted(shape.items())},
        }
    return sorted(found.values(), key=lambda e: (e["endpoint"], e["features"]["stream"], e["id"]))


def derive_shapes(corpus_path: Path) -> dict[str, Any]:
    records = [json.loads(line) for line in corpus_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    found = entries(read_corpus(corpus_path), records)
    return {
        "about": "Shapes of real recorded replies and the features of their requests, texts left out; "
        "written by `python -m tests.conformance.derive shapes CORPUS`.",
        "entries": found,
    }


def one_entry_a_line(document: dict[str, Any]) -> str:
    """The document as JSON with each entry on a line of its own, so that a change reads entry by entry."""
    lines = ",\n".join(json.dumps(e, separators=(",", ":")) for e in document["entries"])
    return f'{{"about": {json.dumps(document["about"])},\n"entries": [\n{lines}\n]}}\n'


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.conformance.derive", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    shapes = commands.add_parser("shapes", help=f"rewrite {SHAPES.name} from a corpus file")
    shapes.add_argument("corpus", type=Path)
    commands.add_parser("known", help=f"rewrite {KNOWN.name} from the current server's replies")
    args = parser.parse_args(argv)
    if args.command == "shapes":
        document = derive_shapes(args.corpus)
        SHAPES.write_text(one_entry_a_line(document), encoding="utf-8")
        print(f"wrote {SHAPES}: {len(document['entries'])} entries", file=sys.stderr)
        return 0
    from tests.conformance.check import known_differences

    known = known_differences(json.loads(SHAPES.read_text(encoding="utf-8"))["entries"])
    KNOWN.write_text(json.dumps(known, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {KNOWN}: differences for {len(known['entries'])} entries", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
