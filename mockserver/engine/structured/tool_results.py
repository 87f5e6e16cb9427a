"""The sentence that opens an answer after a tool result, reporting what the tool returned.

An agent test asserts the final answer uses the tool's output ("the weather in Oslo is 4 °C"):
the answer after a tool result starts with the values it returned, then the usual generated text.
A JSON object gives its scalar values with their keys (``temperature: 4, unit: °C``), nested
objects and lists flattened in order; any other result is quoted as it is, on one line.

Bounded: the first :data:`MAX_RESULT_CHARS` characters of at most :data:`MAX_RESULTS` results are
read, at most :data:`MAX_VALUES` values reported, and the sentence cut at :data:`MAX_MENTION_CHARS`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

MAX_RESULTS = 8
MAX_RESULT_CHARS = 4_000
MAX_VALUES = 16
MAX_MENTION_CHARS = 600
_MAX_DEPTH = 4

_OPENINGS = {"en": "The tool returned ", "zh": "工具返回的结果是："}
_ENDINGS = {"en": ".", "zh": "。"}
_JOINS = {"en": "; ", "zh": "；"}


def mention(results: Sequence[str], language: str) -> str:
    """The opening sentence reporting ``results`` (tool outputs), or ``""`` when they hold nothing."""
    parts = [part for part in (_reported(text[:MAX_RESULT_CHARS]) for text in results[:MAX_RESULTS]) if part]
    if not parts:
        return ""
    body = _JOINS.get(language, "; ").join(parts)
    if len(body) > MAX_MENTION_CHARS:
        body = body[:MAX_MENTION_CHARS].rstrip() + "…"
    ending = _ENDINGS.get(language, ".")
    body = body if body.endswith(("。", ".", "!", "?", "！", "？")) else body + ending
    return _OPENINGS.get(language, _OPENINGS["en"]) + body + " "


def _reported(text: str) -> str:
    stripped = text.strip()
    try:
        value = json.loads(stripped)
    except (ValueError, RecursionError):
        return " ".join(stripped.split())
    pieces: list[str] = []
    _flatten(value, "", pieces, 0)
    return ", ".join(pieces)


def _flatten(value: Any, key: str, pieces: list[str], depth: int) -> None:
    if len(pieces) >= MAX_VALUES:
        return
    if isinstance(value, dict) and depth < _MAX_DEPTH:
        for name, inner in value.items():
            _flatten(inner, str(name), pieces, depth + 1)
    elif isinstance(value, list) and depth < _MAX_DEPTH:
        for inner in value:
            _flatten(inner, key, pieces, depth + 1)
    else:
        shown = _shown(value)
        pieces.append(f"{key}: {shown}" if key else shown)


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, ensure_ascii=False)[:200]
