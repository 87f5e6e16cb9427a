"""Which value of the prompt each parameter of a tool takes, rule by rule.

The rules, in the order they are tried (:data:`RULES`); each binds a parameter at most once and
each piece of the prompt at most once, and a value the parameter's schema refuses is passed over:

1. ``call``: a call of the tool written out in the latest user turn, by name then by position;
2. ``system call``: the same, in the system prompt;
3. ``named value``: the parameter's name, or a Chinese word for it, then the value
   (``city: Oslo``, ``limit is 5``, ``"unit": "celsius"``, ``城市：北京``);
4. ``enum``: a member of the parameter's ``enum`` that the text mentions (the first one mentioned);
5. ``number near name``: a number just before the parameter's name ("5 results", "3 days");
6. ``format``: an ISO date for a ``date``/``date-time`` (or date-named) parameter, an e-mail
   address, a URL, in the order they appear;
7. ``phrase``: a cue phrase whose hints the parameter's name shares ("named X", "called X",
   "for X", "in X", "from X", "to X", "名为X", "在X"), then the same by its description;
8. for required parameters still unbound: ``number`` (the numbers in order, for numeric
   parameters), ``quoted`` (quoted strings in order), ``phrase (any)`` (any cue phrase's value).

Only the latest user turn is read for values; the system prompt only for written calls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mockserver.config.patterns import deferred_pattern
from mockserver.engine.structured import cues as cue_words
from mockserver.engine.structured.coerce import (
    REFUSED,
    accepted_kinds,
    coerce,
    enum_members,
    linear_patterns,
    string_format,
)
from mockserver.engine.structured.prompt_text import Found, Scan, scan, words_at
from mockserver.engine.structured.schema import Schemas, property_schema
from mockserver.engine.structured.written_calls import WrittenCall, written_calls

RULES = (
    "call",
    "system call",
    "named value",
    "enum",
    "number near name",
    "format",
    "phrase",
    "phrase (description)",
    "number",
    "quoted",
    "phrase (any)",
)
MAX_PARAMETERS = 32  # top-level parameters read per tool; the others keep generated values
MAX_NAME_MENTIONS = 8  # places a parameter's name is looked at
MAX_CUES = 32  # cue phrases read per text
MAX_MEMBERS = 100  # enum members looked for per parameter
_CONNECTORS = deferred_pattern(
    r"(?i)[ \t]*(?:[:=：]|[ \t](?:is|are|of|to|as|equals?)[ \t]|是|为|叫)?[ \t]*"
    r"(?:(?:the|a|an)[ \t]+)?"
)
_LISTING = deferred_pattern(r"[^;\n.:=：。；]{1,200}")
_DATE_WORDS = frozenset(
    [
        "date", "day", "when", "start", "end", "deadline", "birthday", "since", "until", "from", "to", "日期", "时间",
    ]
)  # fmt: skip
_EMAIL_WORDS = frozenset(("email", "mail", "邮箱"))
_URL_WORDS = frozenset(("url", "link", "uri", "website", "href", "site"))


@dataclass(frozen=True)
class Parameter:
    name: str
    schema: Any
    index: int
    required: bool
    kinds: frozenset[str]
    fmt: str | None
    words: frozenset[str]
    described: frozenset[str]
    members: tuple[str, ...]

    @property
    def textual(self) -> bool:
        return "string" in self.kinds

    @property
    def numeric(self) -> bool:
        return bool(self.kinds & {"integer", "number"})


@dataclass(frozen=True)
class Binding:
    """A parameter's value taken from the prompt, and the rule that took it."""

    name: str
    value: Any
    rule: str
    found: Found


@dataclass(frozen=True)
class _Pair:
    tier: int
    found: Found
    parameter: Parameter


def parameters(root: Any, schemas: Schemas) -> list[Parameter]:
    """The top-level parameters of an object schema, in the order its ``properties`` lists them."""
    if not isinstance(root, Mapping):
        return []
    flat = schemas.flatten(root)
    properties = flat.get("properties")
    if not isinstance(properties, Mapping):
        return []
    required = set(flat.get("required") or ())
    found = []
    for index, name in enumerate(list(properties)[:MAX_PARAMETERS]):
        sub = property_schema(flat, name)
        found.append(
            Parameter(
                name,
                sub,
                index,
                name in required,
                accepted_kinds(sub, schemas),
                string_format(sub, schemas),
                frozenset(cue_words.name_words(name)),
                cue_words.description_words(schemas.flatten(sub) if isinstance(sub, Mapping) else sub),
                tuple(m for m in enum_members(sub, schemas) if isinstance(m, str))[:MAX_MEMBERS],
            )
        )
    return found


def bind(tool: str, root: Any, schemas: Schemas, latest: str, system: str) -> dict[str, Binding]:
    """The parameters of ``tool`` (schema ``root``) that the prompt gives values for, by name."""
    params = parameters(root, schemas)
    if not params:
        return {}
    strings = linear_patterns(root)
    found = scan(latest)
    pairs = _call_pairs(written_calls(latest, {tool}).get(tool), params, 0)
    pairs += _call_pairs(written_calls(system, {tool}).get(tool), params, 1)
    pairs += _named_pairs(latest, found, params)
    pairs += _enum_pairs(latest, params)
    pairs += _format_pairs(found, params)
    pairs += _phrase_pairs(latest, found, params)
    pairs.sort(key=lambda p: (p.tier, p.found.start, p.parameter.index))
    bound: dict[str, Binding] = {}
    used: list[Found] = []
    for pair in pairs:
        parameter, value_found = pair.parameter, pair.found
        if parameter.name in bound or any(value_found.overlaps(u) for u in used if u.end > u.start):
            continue
        value = coerce(value_found, parameter.schema, schemas, strings=strings)
        if value is REFUSED:
            continue
        bound[parameter.name] = Binding(parameter.name, value, RULES[pair.tier], value_found)
        if value_found.end > value_found.start:
            used.append(value_found)
    return bound


def _call_pairs(call: WrittenCall | None, params: Sequence[Parameter], tier: int) -> list[_Pair]:
    if call is None:
        return []
    by_name = {p.name: p for p in params}
    pairs = [_Pair(tier, value, by_name[name]) for name, value in call.keywords.items() if name in by_name]
    free = [p for p in params if p.name not in call.keywords]
    pairs += [_Pair(tier, value, parameter) for value, parameter in zip(call.positional, free, strict=False)]
    # The call's values are its own: no later rule takes them (an empty span never overlaps).
    return [_Pair(p.tier, Found(p.found.text, p.found.kind, -1 - i, -1 - i, p.found.value), p.parameter)
            for i, p in enumerate(pairs)]  # fmt: skip


def _named_pairs(text: str, found: Scan, params: Sequence[Parameter]) -> list[_Pair]:
    pairs: list[_Pair] = []
    for parameter in params:
        for mention in list(cue_words.name_pattern(parameter.name).finditer(text))[:MAX_NAME_MENTIONS]:
            end = mention.end()
            if end < len(text) and text[end - 1].isascii() and text[end].isalnum():
                continue  # the name is part of a longer word
            connector = _CONNECTORS.match(text, end)
            start = connector.end() if connector is not None else end
            between = text[end:start].strip().lower()
            joined = between not in ("", "the", "a", "an")  # an article alone joins nothing
            explicit = between[:1] in (":", "=", "：")
            clause = (explicit and parameter.textual) or not parameter.words.isdisjoint(cue_words.SEARCH)
            value = found.at(start) or (_listing(text, start) if explicit and "array" in parameter.kinds else None)
            value = value or words_at(text, start, clause=clause)
            if value is not None and (joined or value.kind != "words"):
                pairs.append(_Pair(RULES.index("named value"), value, parameter))
            before = [n for n in found.numbers if 0 <= mention.start() + 1 - n.end <= 2]
            if before and parameter.numeric:
                pairs.append(_Pair(RULES.index("number near name"), before[-1], parameter))
    return pairs


def _listing(text: str, start: int) -> Found | None:
    """A list written after ``name:``: "tags: red, green and blue", up to the next ``other:`` or the sentence's end."""
    match = _LISTING.match(text, start)
    if match is None:
        return None
    listed = match.group(0)
    if match.end() < len(text) and text[match.end()] in ":=：":
        listed = listed[: max(listed.rfind(","), listed.rfind("，"), 0)]  # the last piece names the next value
    listed = listed.strip()
    return Found(listed, "words", start, start + len(listed)) if listed else None


def _enum_pairs(text: str, params: Sequence[Parameter]) -> list[_Pair]:
    lowered = text.lower()
    pairs = []
    for parameter in params:
        for member in parameter.members:
            position = _mentioned(lowered, member.lower())
            if position >= 0:
                value = Found(text[position : position + len(member)], "words", position, position + len(member))
                pairs.append(_Pair(RULES.index("enum"), value, parameter))
    return pairs


def _mentioned(text: str, word: str) -> int:
    """Where ``word`` first stands on its own in ``text`` (CJK words need no spaces around them)."""
    if not word:
        return -1
    start = text.find(word)
    while start >= 0:
        end = start + len(word)
        before_ok = start == 0 or not (text[start - 1].isascii() and text[start - 1].isalnum()) or not word[0].isascii()
        after_ok = end >= len(text) or not (text[end].isascii() and text[end].isalnum()) or not word[-1].isascii()
        if before_ok and after_ok:
            return start
        start = text.find(word, start + 1)
    return -1


def _format_pairs(found: Scan, params: Sequence[Parameter]) -> list[_Pair]:
    tier = RULES.index("format")
    pairs = []
    for parameter in params:
        words = parameter.words | parameter.described
        if parameter.fmt in ("date", "date-time") or (
            parameter.textual and not _DATE_WORDS.isdisjoint(parameter.words)
        ):
            pairs += [_Pair(tier, d, parameter) for d in found.dates]
        if parameter.fmt in ("email", "idn-email") or not _EMAIL_WORDS.isdisjoint(words):
            pairs += [_Pair(tier, e, parameter) for e in found.emails]
        if parameter.fmt in ("uri", "url", "iri") or not _URL_WORDS.isdisjoint(parameter.words):
            pairs += [_Pair(tier, u, parameter) for u in found.urls]
        if parameter.numeric and parameter.required:
            pairs += [_Pair(RULES.index("number"), n, parameter) for n in found.numbers]
        if parameter.textual and parameter.required:
            pairs += [_Pair(RULES.index("quoted"), q, parameter) for q in found.quoted]
    return pairs


def _phrase_pairs(text: str, found: Scan, params: Sequence[Parameter]) -> list[_Pair]:
    textual = [p for p in params if p.textual]
    if not textual:
        return []
    values: list[tuple[Found, frozenset[str]]] = []
    for cue in cue_words.phrase_cues(text, MAX_CUES):
        value = found.at(cue.value_start) or words_at(text, cue.value_start, clause=cue.clause)
        if value is None or value.text.startswith(tuple(cue_words.CHINESE_CUES)):
            continue  # "现在在杭州": the second cue's value is the one
        if cue.cue == "to" and value.kind == "words" and value.text[:1].islower():
            continue  # "to fly": a verb, not a destination
        if value.kind in ("words", "quoted") and not value.text.isdigit():
            values.append((value, cue.hints))
    place = cue_words.chinese_weather_place(text)
    if place is not None:
        values.append((Found(place[0], "words", place[1], place[2]), cue_words.PLACE))
    pairs = []
    for value, hints in values:
        for parameter in textual:
            if not parameter.words.isdisjoint(hints):
                pairs.append(_Pair(RULES.index("phrase"), value, parameter))
            elif not parameter.described.isdisjoint(hints):
                pairs.append(_Pair(RULES.index("phrase (description)"), value, parameter))
            elif parameter.required:
                pairs.append(_Pair(RULES.index("phrase (any)"), value, parameter))
    return pairs
