"""Strings for a JSON Schema: plain words, ``format`` values and ``pattern`` matches.

A ``pattern`` is turned into a string by walking the parse tree of Python's own
regular-expression parser (``re._parser``): literals, classes, ``\\d``/``\\w``/``\\s``,
groups, alternation, back-references, anchors and bounded or unbounded repeats.
Every candidate is checked with ``re.search`` (what ``jsonschema`` does) and with
the length bounds; after a few misses the schema is refused, so no string that
fails its pattern is ever sent.
"""

from __future__ import annotations

import datetime
import importlib
import ipaddress
import random
import re
import string
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from mockserver.config import patterns as regexes
from mockserver.engine.structured.schema import MAX_STRING_LENGTH, SchemaError

# The stdlib's regular-expression parser; re._parser has no type stubs, so it is typed as Any.
_sre: Any = importlib.import_module("re._parser")

WORDS = (
    "alpha", "bravo", "cedar", "delta", "ember", "falcon", "garnet", "harbor", "indigo", "juniper",
    "kestrel", "lumen", "meadow", "nimbus", "orchid", "pioneer", "quartz", "river", "summit", "tundra",
    "umber", "velvet", "willow", "xenon", "yonder", "zephyr", "Paris", "Berlin", "Tokyo", "Lisbon",
)  # fmt: skip
PATTERN_ATTEMPTS = 24
UNBOUNDED_REPEAT_EXTRA = 3  # ``+`` and ``*`` repeat up to this many times past their minimum
_PRINTABLE = string.ascii_letters + string.digits + string.punctuation + " "
_CATEGORIES = {
    "CATEGORY_DIGIT": string.digits,
    "CATEGORY_NOT_DIGIT": string.ascii_letters,
    "CATEGORY_SPACE": " ",
    "CATEGORY_NOT_SPACE": string.ascii_letters + string.digits,
    "CATEGORY_WORD": string.ascii_letters + string.digits + "_",
    "CATEGORY_NOT_WORD": " -.,",
    "CATEGORY_LINEBREAK": "\n",
    "CATEGORY_NOT_LINEBREAK": string.ascii_letters,
}


def _word(r: random.Random) -> str:
    return r.choice(WORDS).lower()


def _uuid(r: random.Random) -> str:
    hexes = f"{r.getrandbits(128):032x}"
    return f"{hexes[:8]}-{hexes[8:12]}-4{hexes[13:16]}-{r.choice('89ab')}{hexes[17:20]}-{hexes[20:]}"


def _date(r: random.Random) -> str:
    return f"2026-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}"


def _time(r: random.Random) -> str:
    return f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}Z"


FORMATS: dict[str, Callable[[random.Random], str]] = {
    "date-time": lambda r: f"{_date(r)}T{_time(r)}",
    "date": _date,
    "time": _time,
    "duration": lambda r: f"P{r.randint(1, 30)}DT{r.randint(0, 23)}H{r.randint(0, 59)}M",
    "email": lambda r: f"{_word(r)}.{_word(r)}@example.com",
    "idn-email": lambda r: f"{_word(r)}@example.com",
    "hostname": lambda r: f"{_word(r)}.example.com",
    "idn-hostname": lambda r: f"{_word(r)}.example.com",
    "ipv4": lambda r: f"10.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(1, 254)}",
    "ipv6": lambda r: f"2001:db8::{r.randint(1, 0xFFFF):x}:{r.randint(1, 0xFFFF):x}",
    "uuid": _uuid,
    "uri": lambda r: f"https://example.com/{_word(r)}",
    "url": lambda r: f"https://example.com/{_word(r)}",
    "iri": lambda r: f"https://example.com/{_word(r)}",
    "uri-reference": lambda r: f"/{_word(r)}/{_word(r)}",
    "iri-reference": lambda r: f"/{_word(r)}/{_word(r)}",
    "uri-template": lambda r: f"https://example.com/{_word(r)}/{{id}}",
    "json-pointer": lambda r: f"/{_word(r)}/{r.randint(0, 9)}",
    "relative-json-pointer": lambda r: f"{r.randint(0, 3)}/{_word(r)}",
    "regex": lambda r: f"^{_word(r)}[0-9]+$",
}


_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ](\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2}))")
_TIME = re.compile(r"(\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")
_DURATION = re.compile(r"P(?!$)(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+S)?)?")
_HOSTNAME = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)(\.(?!-)[A-Za-z0-9-]{1,63}(?<!-))*")
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S*")
_NO_SPACE = re.compile(r"\S*")
_POINTER = re.compile(r"(/([^~/]|~[01])*)*")
_RELATIVE_POINTER = re.compile(r"\d+(#|(/([^~/]|~[01])*)*)")
_FULL_MATCHES = {
    "duration": _DURATION,
    "hostname": _HOSTNAME,
    "idn-hostname": _HOSTNAME,
    "uri": _URI,
    "url": _URI,
    "iri": _URI,
    "uri-reference": _NO_SPACE,
    "iri-reference": _NO_SPACE,
    "uri-template": _NO_SPACE,
    "json-pointer": _POINTER,
    "relative-json-pointer": _RELATIVE_POINTER,
}


def _is_date_time(value: str) -> bool:
    found = _DATE_TIME.fullmatch(value)
    return found is not None and _is_date(value[:10]) and _is_time(found.group(1))


def _is_date(value: str) -> bool:
    return re.fullmatch(r"\d{4}-\d{2}-\d{2}", value) is not None and _parses(datetime.date.fromisoformat, value)


def _is_time(value: str) -> bool:
    found = _TIME.fullmatch(value)
    return found is not None and int(found.group(1)) < 24 and int(found.group(2)) < 60 and int(found.group(3)) < 61


def _is_uuid(value: str) -> bool:
    return _parses(uuid.UUID, value) and len(value) == 36 and all(value[i] == "-" for i in (8, 13, 18, 23))


def _parses(parse: Callable[[str], object], value: str) -> bool:
    try:
        parse(value)
    except (ValueError, re.error):
        return False
    return True


_CHECKS: dict[str, Callable[[str], bool]] = {
    "date-time": _is_date_time,
    "date": _is_date,
    "time": _is_time,
    "email": lambda v: "@" in v,
    "idn-email": lambda v: "@" in v,
    "ipv4": lambda v: _parses(ipaddress.IPv4Address, v),
    "ipv6": lambda v: _parses(ipaddress.IPv6Address, v),
    "uuid": _is_uuid,
    "regex": lambda v: _parses(re.compile, v),
}


def is_format(value: str, fmt: Any) -> bool:
    """Whether ``value`` is a ``fmt`` string, for the formats generated here (any other format passes)."""
    if not isinstance(fmt, str):
        return True
    if fmt in _FULL_MATCHES:
        return _FULL_MATCHES[fmt].fullmatch(value) is not None
    check = _CHECKS.get(fmt)
    return check is None or check(value)


def string_for(schema: Mapping[str, Any], rng: random.Random) -> str:
    low = int(schema.get("minLength", 0))
    pattern = schema.get("pattern")
    high = int(schema.get("maxLength", MAX_STRING_LENGTH if isinstance(pattern, str) else max(low, 40)))
    if low > high:
        raise SchemaError(f"'minLength' {low} is greater than 'maxLength' {high}")
    if isinstance(pattern, str):
        return _matching(pattern, schema.get("format"), low, high, rng)
    fmt = schema.get("format")
    if fmt in FORMATS:
        for _ in range(PATTERN_ATTEMPTS):
            text = FORMATS[fmt](rng)
            if low <= len(text) <= high:
                return text
        raise SchemaError(f"no '{fmt}' string fits minLength {low} and maxLength {high}")
    return _words(rng, low, high)


def _words(rng: random.Random, low: int, high: int) -> str:
    pieces = [rng.choice(WORDS) for _ in range(rng.randint(1, 4))]
    length = sum(map(len, pieces)) + len(pieces) - 1
    while length < low:
        pieces.append(rng.choice(WORDS))
        length += len(pieces[-1]) + 1
    return " ".join(pieces)[:high]


def _matching(pattern: str, fmt: Any, low: int, high: int, rng: random.Random) -> str:
    compiled = regexes.schema_pattern(pattern)  # RE2 where it can: checking a candidate never backtracks

    def fits(text: str) -> bool:
        return low <= len(text) <= high and compiled.search(text) is not None

    if fmt in FORMATS:
        # Only a value of the format itself is sure to be one: the pattern just filters them.
        for _ in range(PATTERN_ATTEMPTS):
            text = FORMATS[fmt](rng)
            if fits(text):
                return text
        raise SchemaError(
            f"no '{fmt}' string matches the pattern {pattern!r} within minLength {low} and maxLength {high}"
        )
    tree = _sre.parse(pattern)
    problem = f"within minLength {low} and maxLength {high}"
    for attempt in range(PATTERN_ATTEMPTS):
        # Later attempts stretch unbounded repeats towards minLength.
        stretch = 0 if attempt < PATTERN_ATTEMPTS // 3 else max(low, 1) * attempt // PATTERN_ATTEMPTS + 1
        try:
            text = _Generator(rng, stretch).sequence(tree)
        except _TooLong:
            problem = f"of at most {MAX_STRING_LENGTH} characters"
            continue
        # Short of minLength, an unanchored end can take padding; tried once stretching has had a go.
        if len(text) < low and attempt >= PATTERN_ATTEMPTS // 2 and fits(text + "x" * (low - len(text))):
            return text + "x" * (low - len(text))
        if fits(text):
            return text
    raise SchemaError(f"could not generate a string matching the pattern {pattern!r} {problem}")


class _TooLong(Exception):
    pass


class _Generator:
    """One walk of a parse tree, choosing with ``rng``."""

    def __init__(self, rng: random.Random, stretch: int) -> None:
        self.rng = rng
        self.stretch = stretch
        self.groups: dict[int, str] = {}
        self.length = 0

    def sequence(self, items: Any) -> str:
        return "".join(self.item(str(op), arg) for op, arg in items)

    def emit(self, text: str) -> str:
        self.length += len(text)
        if self.length > MAX_STRING_LENGTH:
            raise _TooLong
        return text

    def item(self, op: str, arg: Any) -> str:
        if op == "LITERAL":
            return self.emit(chr(arg))
        if op == "NOT_LITERAL":
            return self.emit(self.rng.choice([c for c in _PRINTABLE if ord(c) != arg]))
        if op == "ANY":
            return self.emit(self.rng.choice(string.ascii_letters))
        if op == "IN":
            return self.emit(self.one_of(arg))
        if op == "BRANCH":
            return self.sequence(self.rng.choice(arg[1]))
        if op in ("SUBPATTERN", "ATOMIC_GROUP"):
            group, body = (arg[0], arg[-1]) if op == "SUBPATTERN" else (None, arg)
            text = self.sequence(body)
            if group is not None:
                self.groups[group] = text
            return text
        if op in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, body = arg
            if body.getwidth()[1] == 0:
                return ""  # an empty-width body (an anchor, an empty group): repeating it adds nothing
            top = low + max(UNBOUNDED_REPEAT_EXTRA, self.stretch) if high == _sre.MAXREPEAT else high
            return "".join(self.sequence(body) for _ in range(self.rng.randint(low, min(top, high))))
        if op == "GROUPREF":
            return self.emit(self.groups.get(arg, ""))
        if op == "GROUPREF_EXISTS":
            group, yes, no = arg
            return self.sequence(yes if group in self.groups else (no or []))
        if op in ("AT", "ASSERT", "ASSERT_NOT"):
            return ""  # anchors hold by construction; lookarounds are left to the final re.search
        raise SchemaError(f"pattern construct {op} is not supported")

    def one_of(self, items: list[tuple[Any, Any]]) -> str:
        if items and str(items[0][0]) == "NEGATE":
            allowed = [c for c in _PRINTABLE if not _in_class(c, items[1:])]
            return self.rng.choice(allowed or [" "])
        op, arg = self.rng.choice(items)
        op = str(op)
        if op == "LITERAL":
            return chr(arg)
        if op == "RANGE":
            low, high = arg
            printable = [c for c in _PRINTABLE if low <= ord(c) <= high]
            return self.rng.choice(printable) if printable else chr(self.rng.randint(low, high))
        if op == "CATEGORY":
            return self.rng.choice(_CATEGORIES.get(str(arg), string.ascii_letters))
        raise SchemaError(f"pattern construct {op} in a character class is not supported")


def _in_class(char: str, items: list[tuple[Any, Any]]) -> bool:
    code = ord(char)
    for op, arg in items:
        name = str(op)
        if name == "LITERAL" and code == arg:
            return True
        if name == "RANGE" and arg[0] <= code <= arg[1]:
            return True
        if name == "CATEGORY" and char in _CATEGORIES.get(str(arg), "") and not str(arg).startswith("CATEGORY_NOT"):
            return True
        if name == "CATEGORY" and str(arg).startswith("CATEGORY_NOT"):
            positive = str(arg).replace("CATEGORY_NOT_", "CATEGORY_")
            if char not in _CATEGORIES.get(positive, ""):
                return True
    return False
