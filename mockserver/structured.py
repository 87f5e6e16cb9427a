"""Tool calls and structured output, shared by Chat Completions and the Responses API.

Two decisions live here, each deterministic under the request's seed:

- :func:`instance_for` builds a JSON value that validates against a JSON Schema
  (objects, required and optional properties, arrays, enums, consts, scalars with
  their bounds, ``anyOf``/``oneOf``, nested objects and local ``$ref``/``$defs``).
  It backs ``json_schema`` outputs and the arguments of every tool call.
- :func:`pick_tool` applies the tool-choice rule: with function tools present and
  ``tool_choice`` not ``none``, the reply calls a tool (the named one for a specific
  choice, otherwise a seeded pick), unless the conversation already holds a tool
  result after the last user message, in which case the reply is text.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from mockserver import errors

TOOL_CHOICE_OPTIONS = ("none", "auto", "required")
# Deep or recursive schemas stop adding optional content past this depth.
MAX_DEPTH = 6
DEFAULT_ARRAY_ITEMS = (1, 3)
WORDS = (
    "alpha", "bravo", "cedar", "delta", "ember", "falcon", "garnet", "harbor", "indigo", "juniper",
    "kestrel", "lumen", "meadow", "nimbus", "orchid", "pioneer", "quartz", "river", "summit", "tundra",
    "umber", "velvet", "willow", "xenon", "yonder", "zephyr", "Paris", "Berlin", "Tokyo", "Lisbon",
)  # fmt: skip
_FORMATS = {
    "date-time": lambda r: f"2026-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}T{r.randint(0, 23):02d}:00:00Z",
    "date": lambda r: f"2026-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}",
    "time": lambda r: f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:00",
    "email": lambda r: f"{r.choice(WORDS).lower()}@example.com",
    "uri": lambda r: f"https://example.com/{r.choice(WORDS).lower()}",
    "url": lambda r: f"https://example.com/{r.choice(WORDS).lower()}",
    "uuid": lambda r: _uuid(r),
    "ipv4": lambda r: f"10.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(1, 254)}",
}


def _uuid(rng: random.Random) -> str:
    hexes = f"{rng.getrandbits(128):032x}"
    return f"{hexes[:8]}-{hexes[8:12]}-4{hexes[13:16]}-8{hexes[17:20]}-{hexes[20:]}"


def instance_for(schema: Any, rng: random.Random) -> Any:
    """A value valid against ``schema``; the same ``rng`` state gives the same value."""
    return _Builder(schema if isinstance(schema, Mapping) else {}, rng).build(schema, 0)


def json_object(rng: random.Random) -> dict[str, Any]:
    """The reply of JSON mode (``json_object``): a small object with a few typed fields."""
    return {
        "answer": " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 8))),
        "confidence": round(rng.random(), 2),
        "tags": [rng.choice(WORDS).lower() for _ in range(rng.randint(1, 3))],
    }


def dumps(value: Any) -> str:
    """JSON text as the live API writes it: compact."""
    return orjson.dumps(value).decode()


class _Builder:
    def __init__(self, root: Mapping[str, Any], rng: random.Random) -> None:
        self.root = root
        self.rng = rng

    def build(self, schema: Any, depth: int) -> Any:
        if not isinstance(schema, Mapping):
            return None if schema is False else {}
        schema = self._resolve(schema)
        if "const" in schema:
            return schema["const"]
        if schema.get("enum"):
            return self.rng.choice(list(schema["enum"]))
        for key in ("anyOf", "oneOf"):
            if schema.get(key):
                options = [self._resolve(s) for s in schema[key] if isinstance(s, Mapping)]
                # Past the depth limit, prefer a branch that ends the recursion (null or a scalar).
                if depth >= MAX_DEPTH:
                    options.sort(key=lambda s: s.get("type") not in ("null", "string", "integer", "number", "boolean"))
                return self.build(options[0] if depth >= MAX_DEPTH else self.rng.choice(options), depth)
        if schema.get("allOf"):
            merged: dict[str, Any] = {}
            for part in schema["allOf"]:
                for k, v in self._resolve(part).items():
                    if k in ("properties", "required") and k in merged:
                        merged[k] = {**merged[k], **v} if k == "properties" else [*merged[k], *v]
                    else:
                        merged[k] = v
            return self.build(merged, depth)
        kind = schema.get("type")
        if isinstance(kind, list):
            concrete = [k for k in kind if k != "null"]
            kind = concrete[0] if concrete else "null"
        if kind is None:
            kind = "object" if "properties" in schema else "array" if "items" in schema else "string"
        return getattr(self, f"_{kind}", self._string)(schema, depth)

    def _resolve(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        seen = 0
        while isinstance(schema.get("$ref"), str) and seen < 32:
            ref: str = schema["$ref"]
            target: Any = self.root
            for part in ref.removeprefix("#").strip("/").split("/") if ref != "#" else []:
                target = (
                    target.get(part.replace("~1", "/").replace("~0", "~"), {}) if isinstance(target, Mapping) else {}
                )
            siblings = {k: v for k, v in schema.items() if k != "$ref"}
            schema = {**(target if isinstance(target, Mapping) else {}), **siblings}
            seen += 1
        return schema

    def _object(self, schema: Mapping[str, Any], depth: int) -> dict[str, Any]:
        properties: Mapping[str, Any] = schema.get("properties") or {}
        required = set(schema.get("required") or ())
        out: dict[str, Any] = {}
        for name, sub in properties.items():
            if name in required or (depth < MAX_DEPTH and self.rng.random() < 0.5):
                out[name] = self.build(sub, depth + 1)
        return out

    def _array(self, schema: Mapping[str, Any], depth: int) -> list[Any]:
        low = int(schema.get("minItems", 0))
        high = int(schema.get("maxItems", max(low, DEFAULT_ARRAY_ITEMS[1])))
        count = low if depth >= MAX_DEPTH else self.rng.randint(max(low, min(DEFAULT_ARRAY_ITEMS[0], high)), high)
        prefix = schema.get("prefixItems") or []
        items = schema.get("items", {})
        values = [self.build(prefix[i] if i < len(prefix) else items, depth + 1) for i in range(count)]
        if schema.get("uniqueItems"):
            unique: list[Any] = []
            for value in values:
                if value not in unique:
                    unique.append(value)
            values = unique if len(unique) >= low else values
        return values

    def _string(self, schema: Mapping[str, Any], depth: int) -> str:
        fmt = schema.get("format")
        if fmt in _FORMATS:
            return str(_FORMATS[fmt](self.rng))
        low = int(schema.get("minLength", 0))
        high = int(schema.get("maxLength", max(low, 40)))
        text = " ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(1, 4)))
        while len(text) < low:
            text += " " + self.rng.choice(WORDS)
        return text[:high]

    def _integer(self, schema: Mapping[str, Any], depth: int) -> int:
        low, high = _bounds(schema, integer=True)
        value = self.rng.randint(int(low), int(high))
        step = schema.get("multipleOf")
        if isinstance(step, int) and step > 0:
            value = max(int(low) + (-int(low)) % step, value - value % step)
        return value

    def _number(self, schema: Mapping[str, Any], depth: int) -> float:
        low, high = _bounds(schema, integer=False)
        return round(low + (high - low) * self.rng.random(), 2) if high - low >= 0.02 else low

    def _boolean(self, schema: Mapping[str, Any], depth: int) -> bool:
        return self.rng.random() < 0.5

    def _null(self, schema: Mapping[str, Any], depth: int) -> None:
        return None


def _bounds(schema: Mapping[str, Any], *, integer: bool) -> tuple[float, float]:
    low = float(schema.get("minimum", 0 if "maximum" not in schema else float(schema["maximum"]) - 100))
    high = float(schema.get("maximum", low + 100))
    nudge = 1 if integer else 0.01
    if "exclusiveMinimum" in schema:
        low = float(schema["exclusiveMinimum"]) + nudge
    if "exclusiveMaximum" in schema:
        high = float(schema["exclusiveMaximum"]) - nudge
    if integer:
        low, high = float(int(-(-low // 1))), float(int(high // 1))
    return low, max(low, high)


# -- Tools --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FunctionSpec:
    """One function tool, whichever API's layout it came in."""

    name: str
    parameters: Mapping[str, Any] = field(default_factory=dict)


def pick_tool(
    tools: Sequence[FunctionSpec],
    tool_choice: str | Mapping[str, Any] | None,
    *,
    answered: bool,
    rng: random.Random,
) -> FunctionSpec | None:
    """The function the reply calls, or None for a text reply.

    ``answered`` says whether a tool result follows the last user message: then the
    model has what it asked for and answers in text, whatever ``tool_choice`` says.
    """
    if not tools or tool_choice == "none" or answered:
        return None
    named = chosen_name(tool_choice)
    if named is not None:
        return next(t for t in tools if t.name == named)
    allowed = allowed_names(tool_choice)
    candidates = [t for t in tools if allowed is None or t.name in allowed] or list(tools)
    return rng.choice(candidates)


def chosen_name(tool_choice: str | Mapping[str, Any] | None) -> str | None:
    """The function a specific ``tool_choice`` names, in Chat's nested or Responses' flat layout."""
    if not isinstance(tool_choice, Mapping) or tool_choice.get("type") != "function":
        return None
    nested = tool_choice.get("function")
    name = nested.get("name") if isinstance(nested, Mapping) else tool_choice.get("name")
    return name if isinstance(name, str) else None


def allowed_names(tool_choice: str | Mapping[str, Any] | None) -> set[str] | None:
    """The function names an ``allowed_tools`` choice permits, or None when it is not one."""
    if not isinstance(tool_choice, Mapping) or tool_choice.get("type") != "allowed_tools":
        return None
    inner = tool_choice.get("allowed_tools")
    listed = inner.get("tools") if isinstance(inner, Mapping) else tool_choice.get("tools")
    names: set[str] = set()
    for entry in listed or []:
        if isinstance(entry, Mapping):
            nested = entry.get("function")
            name = nested.get("name") if isinstance(nested, Mapping) else entry.get("name")
            if isinstance(name, str):
                names.add(name)
    return names


def check_tool_choice(tools: Sequence[FunctionSpec], tool_choice: str | Mapping[str, Any] | None) -> None:
    """Refuse a ``tool_choice`` that cannot be honoured, with the live API's wording."""
    if isinstance(tool_choice, str) and tool_choice not in TOOL_CHOICE_OPTIONS:
        raise errors.invalid_value("tool_choice", tool_choice, list(TOOL_CHOICE_OPTIONS))
    if tool_choice in (None, "none", "auto"):
        return
    if not tools:
        raise errors.InvalidRequestError(
            "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
            param="tool_choice",
            code="invalid_value",
        )
    named = chosen_name(tool_choice)
    if named is not None and named not in {t.name for t in tools}:
        raise errors.InvalidRequestError(
            f"Tool choice '{named}' not found in 'tools' parameter.", param="tool_choice", code="invalid_value"
        )
