"""Which recording answers a request: the method, the path and the body made canonical.

Key order and whitespace never count (the body is compared as data). The fields that do not
change a reply are left out: ``stream``, ``stream_options``, ``user``, ``metadata`` and ``store``,
plus any a fixture lists (``replay_ignore``, dotted paths for nested fields). When the replay is
re-paced at the tier asked for, the tier is no part of the match either: ``service_tier``,
Anthropic's ``speed`` and the ``-ultrafast`` suffix of a model id are dropped too.

A request that matches nothing is told the nearest recording (same method and path, fewest
differing fields) and the first field where the two differ.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

IGNORED_FIELDS = ("stream", "stream_options", "user", "metadata", "store")
TIER_FIELDS = ("service_tier", "speed")
ULTRAFAST_SUFFIX = "-ultrafast"
_MISSING = object()


@dataclass(frozen=True)
class Rules:
    ignore: tuple[str, ...] = ()  # dotted paths, besides IGNORED_FIELDS
    tier_free: bool = False  # leave the tier out of the match (replay re-paced at the tier asked for)


def canonical(body: Any, rules: Rules) -> Any:
    """The body as matched: ignored fields removed (a non-object body is matched as it is)."""
    if not isinstance(body, dict):
        return body
    data = dict(body)
    for name in IGNORED_FIELDS:
        data.pop(name, None)
    if rules.tier_free:
        for name in TIER_FIELDS:
            data.pop(name, None)
        model = data.get("model")
        if isinstance(model, str):
            data["model"] = model.removesuffix(ULTRAFAST_SUFFIX)
    for path in rules.ignore:
        _drop(data, path.split("."))
    return data


def key(method: str, path: str, body: Any, rules: Rules) -> bytes:
    """What two requests that get the same recording share."""
    return (
        method.upper().encode()
        + b" "
        + path.encode()
        + b" "
        + orjson.dumps(canonical(body, rules), option=orjson.OPT_SORT_KEYS)
    )


def _drop(data: Any, parts: list[str]) -> None:
    if not parts:
        return
    head, rest = parts[0], parts[1:]
    targets = data if isinstance(data, list) and head == "*" else [data]
    for target in targets:
        if isinstance(target, dict):
            if not rest:
                target.pop(head, None)
            elif head in target:
                target[head] = _copied(target[head])
                _drop(target[head], rest)
        elif isinstance(target, list) and head != "*" and head.isdigit() and int(head) < len(target):
            if not rest:
                continue  # a list keeps its positions: only object fields are dropped
            _drop(target[int(head)], rest)
        elif isinstance(target, list) and head == "*":
            for item in target:
                _drop(item, rest)


def _copied(value: Any) -> Any:
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, list):
        return [_copied(v) for v in value]
    return value


@dataclass(frozen=True)
class Difference:
    field: str  # dotted path; "(body)" for the body as a whole
    asked: Any
    recorded: Any
    count: int  # how many fields differ in all


def difference(asked: Any, recorded: Any) -> Difference | None:
    """The first field where ``asked`` and ``recorded`` differ (in the request's own order), or None."""
    diffs = list(_differences(asked, recorded, ""))
    if not diffs:
        return None
    where, a, r = diffs[0]
    return Difference(where or "(body)", a, r, len(diffs))


def _differences(a: Any, b: Any, where: str) -> Iterator[tuple[str, Any, Any]]:
    if isinstance(a, dict) and isinstance(b, dict):
        for name in [*a, *(n for n in b if n not in a)]:
            yield from _differences(a.get(name, _MISSING), b.get(name, _MISSING), f"{where}.{name}" if where else name)
    elif isinstance(a, list) and isinstance(b, list):
        for i in range(max(len(a), len(b))):
            yield from _differences(
                a[i] if i < len(a) else _MISSING, b[i] if i < len(b) else _MISSING, f"{where}.{i}" if where else str(i)
            )
    elif a != b or type(a) is not type(b):
        yield where, a, b


def nearest(asked: Any, candidates: Iterable[tuple[Any, Any]]) -> tuple[Any, Difference] | None:
    """``(item, difference)`` for the candidate ``(item, canonical body)`` with the fewest differing fields."""
    best: tuple[Any, Difference] | None = None
    for item, recorded in candidates:
        found = difference(asked, recorded)
        if found is None:
            continue
        if best is None or found.count < best[1].count:
            best = (item, found)
    return best


def shown(value: Any, most: int = 60) -> str:
    """A value as a miss message quotes it: JSON, cut at ``most`` characters."""
    if value is _MISSING:
        return "nothing (no such field)"
    text = orjson.dumps(value).decode()
    return text if len(text) <= most else text[: most - 3] + "..."
