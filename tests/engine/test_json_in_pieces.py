"""A large body parsed a piece at a time reads exactly what orjson reads, or leaves the body to orjson;
either way a request gets the value or the error it got before. And a long list gives the event loop
its turns."""

from __future__ import annotations

import asyncio
import json
from typing import Any
from unittest import mock

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockserver import errors
from mockserver.engine import json_in_pieces, jsonbody
from mockserver.engine.json_in_pieces import ELEMENTS_PER_TURN, NotInPieces, parse
from tests.support import with_loop_turns

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)  # past 64 bits too: orjson reads those as floats
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
)
values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=3), children, max_size=4),
    max_leaves=30,
)
bodies = st.dictionaries(st.text(max_size=4), values | st.lists(values, max_size=12), max_size=5)
# Texts orjson and the standard library's scanner read differently, or that are not JSON at all.
NASTY = [
    "1e400", "-1e999", "1" + "0" * 400, "-" + "9" * 320,
    "NaN", "Infinity", "-Infinity", "18446744073709551616", "-9223372036854775809",
    '"\\ud800"', '"\\udc00"', '"\\ud83d\\ude00"', '"\\ud83d\\ud83d"', '"\\\\ud800"', '"\\\\ud83d\\ude00"',
    '"\\\\\\ud83d\\ude00"', "[1,]", "{}", "[]",
    '{"a":1,}', "01", "1.", ".5", '"a\tb"', "[[[[[[", "]", "}", ",", ":", "tru", '"unterminated', " ",
]  # fmt: skip


def outcome(raw: bytes) -> Any:
    """orjson's reading of ``raw``, as JSON text (so that 1 and 1.0 differ), or that it refuses it."""
    try:
        return orjson.dumps(orjson.loads(raw))
    except orjson.JSONDecodeError:
        return "refused"


def in_pieces(raw: bytes) -> Any:
    try:
        return orjson.dumps(asyncio.run(parse(raw)))
    except NotInPieces:
        return "left to orjson"


@settings(max_examples=200, deadline=None)
@given(body=bodies, ascii_only=st.booleans(), indent=st.sampled_from([None, 1]))
def test_a_body_is_read_as_orjson_reads_it(body: dict[str, Any], ascii_only: bool, indent: int | None) -> None:
    raw = json.dumps(body, ensure_ascii=ascii_only, indent=indent).encode()
    if b"\\\\u" in raw:  # a backslash right before a \u: left to orjson, which may refuse it
        assert in_pieces(raw) in ("left to orjson", outcome(raw))
    else:
        assert in_pieces(raw) == outcome(raw)


@settings(max_examples=200, deadline=None)
@given(
    body=bodies,
    cut=st.integers(0, 400),
    nasty=st.sampled_from(NASTY),
    replace=st.integers(0, 3),
)
def test_a_mangled_body_is_read_as_orjson_reads_it_or_left_to_it(
    body: dict[str, Any], cut: int, nasty: str, replace: int
) -> None:
    text = json.dumps(body)
    at = min(cut, len(text))
    raw = (text[:at] + nasty + text[at + replace :]).encode()
    got = in_pieces(raw)
    assert got == "left to orjson" or got == outcome(raw)


@pytest.mark.parametrize(
    "text",
    [
        '{"n": 18446744073709551616, "m": -9223372036854775809, "k": 18446744073709551615}',
        '{"a": 1, "a": [2, 3]}',  # a repeated key: the last, as orjson keeps it
        '  {"messages": [ ] , "x" : { } }  ',
        '{"emoji": "\\ud83d\\ude00"}',
    ],
)
def test_what_the_two_parsers_read_differently_is_read_as_orjson_does(text: str) -> None:
    assert in_pieces(text.encode()) == outcome(text.encode())


@pytest.mark.parametrize(
    "text",
    [
        '{"x": 1e400}',
        '{"x": [' + "1" + "0" * 400 + "]}",  # an integer too large for a float
        '{"x": [NaN]}',
        '{"x": "\\ud800"}',
        '{"x": "\\udc00 after"}',
        "[1, 2]",
        '{"x": 1} trailing',
    ],
)
def test_what_orjson_refuses_is_left_to_it(text: str) -> None:
    assert in_pieces(text.encode()) == "left to orjson"
    assert outcome(text.encode()) == "refused" or text.startswith("[")


@settings(max_examples=100, deadline=None)
@given(raw=st.binary(max_size=200) | bodies.map(lambda b: json.dumps(b).encode()[:-1]))
def test_a_request_gets_the_value_or_the_error_it_got_before(raw: bytes) -> None:
    def result(load: Any) -> Any:
        try:
            return ("value", orjson.dumps(load()))
        except errors.MockAPIError as exc:
            return ("error", exc.code, str(exc))

    with mock.patch.object(json_in_pieces, "PIECEWISE_BYTES", 0):
        turned = result(lambda: asyncio.run(jsonbody.loads_in_turns(raw, 8)))
    assert turned == result(lambda: jsonbody.loads(raw, 8))


def test_a_long_list_gives_the_loop_its_turns() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": f"line {n}"} for n in range(40 * ELEMENTS_PER_TURN)]}
    raw = orjson.dumps(body)
    value, ran = with_loop_turns(lambda: parse(raw))
    assert value == body
    assert ran >= 39


FRAGMENTS = ["\\ud83d", "\\ude00", "\\uDBFF", "\\uDC00", "a", "\\\\", "\\n", "\\u00e9", '"']


@settings(max_examples=200, deadline=None)
@given(parts=st.lists(st.sampled_from(FRAGMENTS), max_size=30), window=st.integers(1, 16))
def test_surrogates_are_found_whatever_the_search_window(parts: list[str], window: int) -> None:
    raw = "".join(parts).encode()
    whole = asyncio.run(json_in_pieces._has_lone_surrogate(raw))
    with mock.patch.object(json_in_pieces, "SEARCH_BYTES", window):
        assert asyncio.run(json_in_pieces._has_lone_surrogate(raw)) == whole
