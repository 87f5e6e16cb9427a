"""A large JSON body parsed a piece at a time, with the event loop's turns between pieces.

orjson parses a body in one call, and the event loop waits for the whole of it: about 10 ms per MiB
of small objects (a conversation of many short messages), so some 350 ms for a body at the default
32 MiB limit, while every paced stream stalls. A body is mostly one long list (``messages``,
``input``), so :func:`parse` reads the top-level object's members one by one and a member that is a
list one element at a time, each with the standard library's C scanner
(``json.JSONDecoder.scan_once``), and gives the loop a turn every :data:`ELEMENTS_PER_TURN` elements.

It reads exactly what orjson reads, or gives up (:class:`NotInPieces`) and the caller parses the
body with orjson, which then gives the value or the error it always gives. The scanner differs from
orjson in a few places, each handled:

- integers past 64 bits: orjson reads them as floats, so does :func:`_as_orjson_int` (and past a
  float's range, orjson refuses them: this gives up);
- numbers too large for a float (``1e400``), ``NaN`` and ``Infinity``: orjson refuses them, so
  this gives up on them;
- an unpaired surrogate escape (``"\\ud800"``): orjson refuses it, the scanner does not, so a body
  with one (found in its bytes before anything is parsed) is left to orjson;
- anything else it does not accept (bad JSON anywhere, a top level that is not an object, nesting
  past the interpreter's recursion limit): it gives up.

It costs about twice orjson's CPU (the scanner is slower, and each element is a call), so it is
only used past :data:`PIECEWISE_BYTES`.
"""

from __future__ import annotations

import asyncio
import json
import json.scanner
import math
import re
from collections.abc import Callable
from typing import Any

PIECEWISE_BYTES = 1024 * 1024  # smaller bodies: orjson, in one call of a few milliseconds at most
ELEMENTS_PER_TURN = 1024  # a list's elements read between two turns of the loop (about a millisecond)

_WHITESPACE = re.compile(r"[ \t\n\r]*")
# A surrogate's escape: high (D800-DBFF) or low (DC00-DFFF). The literal start keeps the search quick.
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_BACKSLASH = ord("\\")
_ESCAPE_BYTES = 6  # \uXXXX
SEARCH_BYTES = 1024 * 1024  # bytes searched for surrogates between two turns of the loop (about 0.5 ms)
_INT64_MIN, _UINT64_MAX = -(2**63), 2**64 - 1


class NotInPieces(Exception):
    """This body is not read here: parse it whole with orjson (the value or the error it gives)."""


def _as_orjson_int(text: str) -> int | float:
    """An integer as orjson reads it: past 64 bits, the nearest float (past a float's range, refused)."""
    value = int(text)
    return value if _INT64_MIN <= value <= _UINT64_MAX else _finite_float(text)


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise NotInPieces  # orjson refuses a number a float cannot hold
    return value


def _refused_constant(text: str) -> Any:
    raise NotInPieces  # NaN, Infinity, -Infinity: not JSON, refused by orjson


# The decoder's scanner (``scan_once``, the C one): what ``raw_decode`` calls, without its checks.
_DECODER = json.JSONDecoder(parse_int=_as_orjson_int, parse_float=_finite_float, parse_constant=_refused_constant)
_SCAN: Callable[[str, int], tuple[Any, int]] = json.scanner.make_scanner(_DECODER)  # type: ignore[arg-type]  # typeshed


async def parse(raw: bytes) -> dict[str, Any]:
    """The JSON object ``raw`` holds, read a member at a time and a list an element at a time, with a
    turn of the loop every :data:`ELEMENTS_PER_TURN` elements; :class:`NotInPieces` when orjson should
    read it instead (see the module's docstring)."""
    if await _has_lone_surrogate(raw):
        raise NotInPieces
    try:
        text = raw.decode()
        return await _object(text)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise NotInPieces from None


async def _has_lone_surrogate(raw: bytes) -> bool:
    """Whether ``raw`` escapes a surrogate that is not half of a pair (a high one, then at once a low
    one). One right after another backslash counts too: such a body is left to orjson. Searched a
    :data:`SEARCH_BYTES` window at a time, with the loop's turns between (a body with no backslash at
    all, in one quick look)."""
    if b"\\" not in raw:
        return False
    pending = -1  # where a high surrogate's escape ended, while its low half has yet to come
    for start in range(0, len(raw), SEARCH_BYTES):
        if start:
            await asyncio.sleep(0)
        end = start + SEARCH_BYTES
        for found in _SURROGATE.finditer(raw, start, end + _ESCAPE_BYTES):
            if found.start() >= end:
                break  # the next window's
            if found.start() and raw[found.start() - 1] == _BACKSLASH:
                return True  # after another backslash: whether it is an escape at all is orjson's to say
            low = found.group()[3:4].lower() in b"cdef"
            if pending >= 0:
                if not (low and found.start() == pending):
                    return True  # a high one not followed at once by a low one
                pending = -1
            elif low:
                return True  # a low one alone
            else:
                pending = found.end()
    return pending >= 0


def _scan(text: str, index: int) -> tuple[Any, int]:
    """The value that starts at ``index``, and where it ends (a StopIteration would become a
    RuntimeError in a coroutine)."""
    try:
        return _SCAN(text, index)
    except StopIteration:
        raise NotInPieces from None


def _skip(text: str, index: int) -> int:
    return _WHITESPACE.match(text, index).end()  # type: ignore[union-attr]  # matches empty


async def _object(text: str) -> dict[str, Any]:
    index = _skip(text, 0)
    if text[index : index + 1] != "{":
        raise NotInPieces
    members: dict[str, Any] = {}
    index = _skip(text, index + 1)
    if text[index : index + 1] == "}":
        return _whole(text, index + 1, members)
    while True:
        if text[index : index + 1] != '"':
            raise NotInPieces
        key, index = _scan(text, index)
        index = _skip(text, index)
        if text[index : index + 1] != ":":
            raise NotInPieces
        index = _skip(text, index + 1)
        if text[index : index + 1] == "[":
            members[key], index = await _list(text, index)
        else:
            members[key], index = _scan(text, index)
        index = _skip(text, index)
        separator = text[index : index + 1]
        if separator == "}":
            return _whole(text, index + 1, members)
        if separator != ",":
            raise NotInPieces
        index = _skip(text, index + 1)


async def _list(text: str, index: int) -> tuple[list[Any], int]:
    """The list that opens at ``index``, and where it ends."""
    elements: list[Any] = []
    index = _skip(text, index + 1)
    if text[index : index + 1] == "]":
        return elements, index + 1
    while True:
        element, index = _scan(text, index)
        elements.append(element)
        index = _skip(text, index)
        separator = text[index : index + 1]
        if separator == "]":
            return elements, index + 1
        if separator != ",":
            raise NotInPieces
        index = _skip(text, index + 1)
        if len(elements) % ELEMENTS_PER_TURN == 0:
            await asyncio.sleep(0)


def _whole(text: str, end: int, members: dict[str, Any]) -> dict[str, Any]:
    """``members``, if nothing but whitespace follows the object."""
    if _skip(text, end) != len(text):
        raise NotInPieces
    return members
