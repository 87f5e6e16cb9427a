"""JSON keys a prompt lists in prose, typed where the prose says so."""

from __future__ import annotations

from typing import Any

import pytest

from mockserver.engine.structured.prose_keys import prose_schema

STRING: dict[str, Any] = {"type": "string"}


@pytest.mark.parametrize(
    ("prompt", "properties"),
    [
        ("Tell me a joke. Respond in JSON with 'setup' and 'punchline' keys.", {"setup": STRING, "punchline": STRING}),
        ("Give me a JSON object with the keys name and age.", {"name": STRING, "age": STRING}),
        ("return JSON containing title and summary", {"title": STRING, "summary": STRING}),
        ("Answer in json with a `result` key", {"result": STRING}),
        (
            "Return JSON with fields: name, age (a number), hobbies (a list of strings)",
            {"name": STRING, "age": {"type": "integer"}, "hobbies": {"type": "array", "items": STRING}},
        ),
        (
            "Reply in JSON. The object has properties city, temperature (a float) and sunny (a boolean).",
            {"city": STRING, "temperature": {"type": "number"}, "sunny": {"type": "boolean"}},
        ),
        ("Output JSON with name: string, age: integer", {"name": STRING, "age": {"type": "integer"}}),
        (
            "Return a JSON object with title, tags as a list of strings and year as a number",
            {"title": STRING, "tags": {"type": "array", "items": STRING}, "year": {"type": "integer"}},
        ),
        ("返回一个JSON，包含 name 和 age 字段", {"name": STRING, "age": STRING}),
        (
            "用JSON回答，字段：title、summary、score（数字）",
            {"title": STRING, "summary": STRING, "score": {"type": "integer"}},
        ),
    ],
)
def test_keys_listed_in_prose(prompt: str, properties: dict[str, Any]) -> None:
    schema = prose_schema([prompt])
    assert schema is not None
    assert schema["properties"] == properties and schema["required"] == list(properties)
    assert schema["additionalProperties"] is False


@pytest.mark.parametrize(
    "prompt",
    [
        "Respond in JSON with a short answer",  # one bare word after "with" is prose
        "Tell me about keys and fields of wheat",  # no JSON asked for
        "",
    ],
)
def test_prose_without_keys_gives_none(prompt: str) -> None:
    assert prose_schema([prompt]) is None


def test_the_latest_message_that_lists_keys_wins() -> None:
    schema = prose_schema(["Reply in JSON with keys a and b", "Now JSON with fields: c, d"])
    assert schema is not None and list(schema["properties"]) == ["c", "d"]
