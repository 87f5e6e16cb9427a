"""Calls written out in a prompt: ``magic_function(3)``, ``get_weather("Oslo")``, ``f(x=2, y='a')``.

A call names one of the request's tools and lists its arguments in Python's or JSON's way:
positional first, then ``name=value`` (or ``name: value``). Each argument is a literal (a string
in any quotes, a number, ``true``/``True``, ``null``/``None``, a list or an object) or else a
bare word, kept as text. The first call of a tool in a text is the one read.

Bounded: the names are found with RE2; at most :data:`MAX_CALL_CHARS` characters of arguments
are read per call and :data:`MAX_CALLS` calls per text, and a literal nested past the
interpreter's parser limits is kept as text.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from mockserver.config.patterns import deferred_pattern
from mockserver.engine.structured.prompt_text import Found

MAX_CALL_CHARS = 500
MAX_CALLS = 16

_CALL_NAME = deferred_pattern(r"([A-Za-z_][A-Za-z0-9_.-]{0,127})[ \t]*\(")
_KEYWORD = deferred_pattern(r"[ \t]*([A-Za-z_][A-Za-z0-9_]{0,127})[ \t]*[=:][ \t]*")
_NAME_WORD = deferred_pattern(r"[a-z]{3,}")
_OPEN = {"(": ")", "[": "]", "{": "}"}
_QUOTES = {'"': '"', "'": "'", "“": "”", "‘": "’", "「": "」"}


@dataclass(frozen=True)
class WrittenCall:
    """One call of a tool written in the text, with its arguments by position and by name."""

    name: str
    start: int
    positional: tuple[Found, ...] = ()
    keywords: dict[str, Found] = field(default_factory=dict)


def written_calls(text: str, names: Collection[str]) -> dict[str, WrittenCall]:
    """The first written call of each tool in ``names`` that ``text`` holds, by tool name."""
    calls: dict[str, WrittenCall] = {}
    seen = 0
    for match in _CALL_NAME.finditer(text):
        written = match.group(1)
        name = written if written in names else written.rsplit(".", 1)[-1]  # functions.get_weather(...)
        if name not in names or name in calls:
            continue
        seen += 1
        if seen > MAX_CALLS:
            break
        parsed = _arguments(text, match.end())
        if parsed is not None:
            calls[name] = WrittenCall(name, match.start(), *parsed)
    return calls


def named_tool(latest: str, system: str, names: Sequence[str]) -> str | None:
    """The tool the prompt names: the first one written as a call in the latest user turn, else in
    the system prompt, else the first one whose name the latest user turn mentions as a word, else
    the one whose name's words (of three letters or more) the latest user turn uses most."""
    for text in (latest, system):
        calls = written_calls(text, names)
        if calls:
            return min(calls.values(), key=lambda call: call.start).name
    mentioned = [(position, name) for name in names if (position := _word_at(latest, name)) >= 0]
    if mentioned:
        return min(mentioned)[1]
    # Else the one tool whose name's words the turn uses most ("create a customer": create_customer).
    lowered = latest.lower()
    scores = {name: sum(_word_at(lowered, w) >= 0 for w in set(_NAME_WORD.findall(name.lower()))) for name in names}
    best = max(scores.values(), default=0)
    winners = [name for name, score in scores.items() if score == best]
    return winners[0] if best > 0 and len(winners) == 1 else None


def _word_at(text: str, word: str) -> int:
    start = text.find(word)
    while start >= 0:
        end = start + len(word)
        if (start == 0 or not _is_word(text[start - 1])) and (end >= len(text) or not _is_word(text[end])):
            return start
        start = text.find(word, start + 1)
    return -1


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _arguments(text: str, start: int) -> tuple[tuple[Found, ...], dict[str, Found]] | None:
    """The arguments from just after ``(`` to the matching ``)``, or None when it does not close in time."""
    pieces = _split(text, start)
    if pieces is None:
        return None
    positional: list[Found] = []
    keywords: dict[str, Found] = {}
    for piece_start, piece_end in pieces:
        keyword = _KEYWORD.match(text, piece_start, piece_end)
        value_start = keyword.end() if keyword is not None else piece_start
        raw = text[value_start:piece_end].strip()
        if not raw:
            continue
        offset = value_start + (len(text[value_start:piece_end]) - len(text[value_start:piece_end].lstrip()))
        found = _literal(raw, offset)
        if keyword is not None:
            keywords.setdefault(keyword.group(1), found)
        elif not keywords:  # a positional argument after a keyword one is not Python; ignored
            positional.append(found)
    return tuple(positional), keywords


def _split(text: str, start: int) -> list[tuple[int, int]] | None:
    """Where each top-level argument is, between ``start`` and the ``)`` that closes the call."""
    pieces: list[tuple[int, int]] = []
    closers: list[str] = []
    quote: str | None = None
    piece = start
    end = min(len(text), start + MAX_CALL_CHARS)
    i = start
    while i < end:
        char = text[i]
        if quote is not None:
            if char == "\\":
                i += 2
                continue
            if char == quote:
                quote = None
        elif char in _QUOTES:
            quote = _QUOTES[char]
        elif char in _OPEN:
            closers.append(_OPEN[char])
        elif closers and char == closers[-1]:
            closers.pop()
        elif char == ")" and not closers:
            pieces.append((piece, i))
            return pieces
        elif char == "," and not closers:
            pieces.append((piece, i))
            piece = i + 1
        i += 1
    return None


def _literal(raw: str, start: int) -> Found:
    end = start + len(raw)
    if raw[0] in _QUOTES and raw[-1] == _QUOTES[raw[0]] and len(raw) >= 2:
        return Found(raw[1:-1], "quoted", start, end, raw[1:-1])
    for parse in (json.loads, ast.literal_eval):
        try:
            value = parse(raw)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        return Found(raw, "literal", start, end, _plain(value))
    return Found(raw, "words", start, end)


def _plain(value: Any) -> Any:
    """A Python literal as JSON would have it: tuples and sets as lists, anything else as text."""
    if isinstance(value, tuple | set | frozenset | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)
