"""The keys a prompt lists in prose for a JSON answer, as a schema: "with 'setup' and 'punchline'
keys", "fields: name, age", "return JSON containing title and summary", "包含 name 和 age 字段".

A ``json_object`` answer (and a ```` ```json ```` block asked for in prose) whose prompt gives no
schema nor example object uses these keys. A key is a string unless the words right after it say
otherwise: "(a number)" or "as an integer" give an integer (a JSON number that parses into an
``int`` field as well as a ``float`` one), "a decimal"/"a float" a number, "a boolean"/"true or
false" a boolean, "a list of strings"/"an array of numbers" an array of those, "an object" an object.

Bounded like the rest of :mod:`.prompt_text`: RE2 only, the first :data:`MAX_PROMPT_CHARS`
characters of each text, at most :data:`MAX_KEYS` keys.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mockserver.config.patterns import deferred_pattern
from mockserver.engine.structured.prompt_text import MAX_PROMPT_CHARS

MAX_KEYS = 32
_KEY = r"(?:\"[^\"\n]{1,64}\"|'[^'\n]{1,64}'|`[^`\n]{1,64}`|“[^”\n]{1,64}”|[A-Za-z_][A-Za-z0-9_.-]{0,63})"
_NOTE = (
    r"(?:[ \t]*(?:\([^()\n]{1,40}\)|（[^（）\n]{1,40}）|:[ \t]*[A-Za-z]{1,20})"
    r"|[ \t]+as[ \t]+(?:an?[ \t]+)?(?:(?:list|array)[ \t]+of[ \t]+[A-Za-z]{1,20}|[A-Za-z]{1,20}))?"
)
_SEP = r"(?:[ \t]*(?:,[ \t]*(?:and|or)?|，|、|;|and|or|&|以及|和|与|及)[ \t]*)"
_ITEM = deferred_pattern(rf"({_KEY})({_NOTE})")
_LIST = rf"({_KEY}{_NOTE}(?:{_SEP}{_KEY}{_NOTE})*)"
_WORDS = r"(?:keys?|fields?|properties|property|attributes?|members?|entries)"
_INTRODUCED = deferred_pattern(
    rf"(?i)(?:with|having|has|contains?|containing|including|includes?)[ \t]+(?:the[ \t]+|exactly[ \t]+)?"
    rf"(?:(?:following[ \t]+)?{_WORDS}[ \t]*(?:named|called)?[ \t]*:?[ \t]*)?(?:(?:an?|the|two|three)[ \t]+)?{_LIST}"
    rf"[ \t]*({_WORDS})?"
)
_LISTED = deferred_pattern(rf"(?i){_WORDS}[ \t]*(?:named|called|are|is|of)?[ \t]*[:：][ \t]*{_LIST}")
_CHINESE = deferred_pattern(
    rf"(?:包含|包括|含有|带有|具有)[ \t]*{_LIST}[ \t]*(?:等)?(?:字段|键|属性)"
    rf"|(?:字段|键|属性)(?:为|是|有|包括)?[ \t]*[:：]?[ \t]*{_LIST}"
)
_JSON_WORD = deferred_pattern(r"(?i)json|对象")
_NOT_KEYS = frozenset(
    [
        "a", "an", "the", "and", "or", "of", "with", "json", "object", "keys", "key", "fields", "field", "properties",
        "property", "following", "exactly", "only", "these", "those", "it", "them", "values", "value", "data", "format",
        "output", "response", "answer",
    ]
)  # fmt: skip
_TYPES: tuple[tuple[tuple[str, ...], dict[str, Any]], ...] = (
    (("list of number", "array of number", "list of integer", "array of integer", "数字列表", "整数列表", "数字数组"),
     {"type": "array", "items": {"type": "integer"}}),
    (("list", "array", "列表", "数组"), {"type": "array", "items": {"type": "string"}}),
    (("boolean", "bool", "true or false", "true/false", "布尔"), {"type": "boolean"}),
    (("float", "decimal", "小数", "浮点"), {"type": "number"}),
    (("number", "integer", "int", "count", "数字", "整数", "数值"), {"type": "integer"}),
    (("object", "dict", "map", "对象"), {"type": "object"}),
)  # fmt: skip
_TYPE_AFTER = deferred_pattern(
    r"(?i)^[ \t]*(?:\(|（|:|：|-|—|as|is|should be|being|which is|为|是)[ \t]*(?:an?|the)?[ \t]*"
    r"([A-Za-z/ ]{2,30}|\p{Han}{2,6})"
)


def prose_schema(texts: Sequence[str]) -> dict[str, Any] | None:
    """The object schema the prose of the messages lists the keys of (latest message first), or None."""
    for text in reversed(texts):
        keys = _keys_in(text[:MAX_PROMPT_CHARS])
        if keys:
            return {
                "type": "object",
                "properties": dict(keys),
                "required": [k for k, _ in keys],
                "additionalProperties": False,
            }
    return None


def _keys_in(text: str) -> list[tuple[str, dict[str, Any]]]:
    if _JSON_WORD.search(text) is None:
        return []
    for pattern in (_LISTED, _INTRODUCED, _CHINESE):
        for match in pattern.finditer(text):
            listed = next((g for g in match.groups() if g), "")
            introduced_by_word = (
                pattern is not _INTRODUCED
                or match.group(0).lower().count("key")
                or any(w in match.group(0).lower() for w in ("field", "propert", "attribute", "member", "entries"))
            )
            keys = _split(listed)
            quoted = any(c in listed for c in "\"'`“")
            if len(keys) < 2 and not (quoted or introduced_by_word):
                continue  # one bare word after "with" is prose, not a key
            if keys and (introduced_by_word or _near_json(text, match.start())):
                return keys[:MAX_KEYS]
    return []


def _near_json(text: str, position: int) -> bool:
    """Whether "json" is written shortly before ``position`` ("return JSON containing title and summary")."""
    return _JSON_WORD.search(text[max(0, position - 60) : position]) is not None


def _split(listed: str) -> list[tuple[str, dict[str, Any]]]:
    keys: list[tuple[str, dict[str, Any]]] = []
    for match in _ITEM.finditer(listed):
        raw = match.group(1)
        quoted = raw[0] in "\"'`“"
        key = raw[1:-1].strip() if quoted else raw.rstrip(".-")
        if not key or (not quoted and key.lower() in _NOT_KEYS) or any(k == key for k, _ in keys):
            continue
        keys.append((key, _type_after(listed[match.start(2) : match.start(2) + 48])))
    return keys


def _type_after(following: str) -> dict[str, Any]:
    match = _TYPE_AFTER.match(following)
    if match is None:
        return {"type": "string"}
    said = match.group(1).lower()
    for words, schema in _TYPES:
        if any(said.startswith(w) or (f" {w}" in f" {said}" and said.find(w) < 12) for w in words):
            return dict(schema)
    return {"type": "string"}
