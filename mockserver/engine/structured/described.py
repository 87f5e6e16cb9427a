"""A JSON Schema (or an example object) that the prompt describes, for ``json_object`` answers.

Libraries such as instructor (``Mode.JSON``, ``Mode.MD_JSON``) send ``response_format:
{"type": "json_object"}`` (or nothing) and put the schema of the answer they expect in a
system or user message, as a fenced ```` ```json ```` block or a bare object. A live model
answers with an instance of it; so does the mock:

- :func:`described_schema` finds the first JSON object in the messages (latest message first)
  that is a schema (it has ``properties``, or ``type: "object"`` with them, or ``$defs`` and
  a ``$ref``), or else an example object, from which a schema is inferred (its keys, required,
  with the types of its values);
- :func:`asks_for_json_block` tells whether a plain-text request asks for the answer in a
  ```` ```json ```` code block (instructor's ``Mode.MD_JSON``).

Bounded: at most :data:`MAX_TEXT_CHARS` characters of each message and :data:`MAX_CANDIDATES`
opening braces per message are tried, so a long prompt costs little.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

MAX_TEXT_CHARS = 200_000
MAX_CANDIDATES = 64

_DECODER = json.JSONDecoder()
_FENCED = re.compile(r"```(?:json|JSON)?\s*\n(.*?)```", re.DOTALL)
_JSON_BLOCK_REQUEST = re.compile(
    r"```json|json\s*code\s*-?\s*block|json\s+block|code\s*block\s+(?:of|with)\s+json", re.IGNORECASE
)


def described_schema(texts: Sequence[str]) -> dict[str, Any] | None:
    """The schema the messages describe (a schema, or one inferred from an example object), or ``None``."""
    example: dict[str, Any] | None = None
    for text in reversed(texts):
        for candidate in _objects_in(text[:MAX_TEXT_CHARS]):
            if _is_schema(candidate):
                return candidate
            if example is None and candidate:
                example = candidate
    return _inferred(example) if example is not None else None


def asks_for_json_block(texts: Sequence[str]) -> bool:
    """Whether the messages ask for the answer as a ```` ```json ```` code block."""
    for text in texts:  # a loop rather than any() over a generator: every prose answer asks
        text = text[:MAX_TEXT_CHARS]  # the text itself when it is shorter (most): no copy
        # Every phrase has "json" in it: a text without it (case folded, as the pattern matches) is passed
        # over without the search, which tries every position of the text.
        if "json" in text.casefold() and _JSON_BLOCK_REQUEST.search(text):
            return True
    return False


def _objects_in(text: str) -> list[dict[str, Any]]:
    """JSON objects in ``text``: fenced blocks first, then bare objects, outermost only."""
    found: list[dict[str, Any]] = []
    for block in _FENCED.findall(text):
        value = _loads(block.strip())
        if isinstance(value, dict):
            found.append(value)
    position, tried = text.find("{"), 0
    while position >= 0 and tried < MAX_CANDIDATES:
        tried += 1
        try:
            value, end = _DECODER.raw_decode(text, position)
        except (ValueError, RecursionError):  # not JSON, or nested past the interpreter's depth
            position = text.find("{", position + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        position = text.find("{", end)
    return found


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _is_schema(value: dict[str, Any]) -> bool:
    properties = value.get("properties")
    if isinstance(properties, dict) and properties and all(isinstance(p, dict) for p in properties.values()):
        return bool(value.get("type", "object") == "object")
    return isinstance(value.get("$defs"), dict) and isinstance(value.get("$ref"), str)


MAX_EXAMPLE_DEPTH = 16


def _inferred(example: Any, depth: int = 0) -> dict[str, Any]:
    """A schema that ``example`` and values like it satisfy: its keys, all required, typed as it is.
    Below :data:`MAX_EXAMPLE_DEPTH` levels, any value will do."""
    if depth >= MAX_EXAMPLE_DEPTH:
        return {"type": "null"}
    if isinstance(example, dict):
        return {
            "type": "object",
            "properties": {str(k): _inferred(v, depth + 1) for k, v in example.items()},
            "required": [str(k) for k in example],
            "additionalProperties": False,
        }
    if isinstance(example, list):
        return (
            {"type": "array", "items": _inferred(example[0], depth + 1)}
            if example
            else {"type": "array", "maxItems": 0}
        )
    if isinstance(example, bool):
        return {"type": "boolean"}
    if isinstance(example, int):
        return {"type": "integer"}
    if isinstance(example, float):
        return {"type": "number"}
    if isinstance(example, str):
        return {"type": "string"}
    return {"type": "null"}
