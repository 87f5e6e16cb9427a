"""``json_object`` answers follow the schema the prompt describes, as instructor sends it.

instructor (``Mode.JSON``, ``Mode.MD_JSON``) pins ``jiter<0.15``, which forces an ``openai``
older than the one these tests use, so it cannot share the test environment. These tests send
its request shapes verbatim instead (captured from instructor 1.17 against this server) and
parse the reply as instructor does: the whole content (``Mode.JSON``) or the ```json block in it
(``Mode.MD_JSON``), validated by the pydantic model.
"""

from __future__ import annotations

import json
import re
from typing import Any

import openai
import pytest
from pydantic import BaseModel

from mockserver import MockServer
from mockserver.engine.structured import described
from tests.support import sdk


class Address(BaseModel):
    street: str
    city: str


class User(BaseModel):
    name: str
    age: int
    tags: list[str]
    address: Address


def instructor_system_message(model: type[BaseModel]) -> str:
    """instructor's Mode.JSON / Mode.MD_JSON system message (instructor 1.17, verbatim)."""
    return f"""
            As a genius expert, your task is to understand the content and provide
            the parsed objects in json that match the following json_schema:\n

            {json.dumps(model.model_json_schema(), indent=2, ensure_ascii=False)}

            Make sure to return an instance of the JSON, not the schema itself
"""


def _complete(client: openai.OpenAI, messages: list[dict[str, str]], **kwargs: Any) -> str:
    reply = client.chat.completions.create(model="gpt-5.6-sol", messages=messages, **kwargs)  # type: ignore[arg-type]
    return reply.choices[0].message.content or ""


def test_mode_json_gets_an_instance_of_the_schema(server: MockServer) -> None:
    client = sdk(server)
    messages = [
        {"role": "system", "content": instructor_system_message(User)},
        {"role": "user", "content": "Extract: Jason is 25 years old and lives at 1 Main St, Springfield"},
    ]
    for seed in range(5):
        content = _complete(client, messages, response_format={"type": "json_object"}, seed=seed)
        User.model_validate_json(content)  # nested model through $defs / $ref


def test_mode_md_json_gets_a_fenced_instance(server: MockServer) -> None:
    client = sdk(server)
    messages = [
        {"role": "system", "content": instructor_system_message(User)},
        {
            "role": "user",
            "content": "Extract: Jason is 25 years old\n\n"
            "Return the correct JSON response within a ```json codeblock. not the JSON_SCHEMA",
        },
    ]
    content = _complete(client, messages)
    match = re.search(r"```(?:json)?\s*(.*?)\s*```", content, re.DOTALL)  # instructor's extraction
    assert match is not None, content
    User.model_validate_json(match.group(1))


def test_responses_json_object_follows_the_schema_in_instructions(server: MockServer) -> None:
    client = sdk(server)
    response = client.responses.create(
        model="gpt-5.6-sol",
        instructions=instructor_system_message(User),
        input="Extract the user as json: Ann, 31, 5 Elm Rd, Leeds",
        text={"format": {"type": "json_object"}},
        reasoning={"effort": "none"},
    )
    User.model_validate_json(response.output_text)


def test_an_example_object_gives_its_shape(server: MockServer) -> None:
    client = sdk(server)
    prompt = 'Reply in JSON like this example: {"city": "Paris", "population": 2100000, "capital": true}'
    value = json.loads(
        _complete(client, [{"role": "user", "content": prompt}], response_format={"type": "json_object"})
    )
    assert set(value) == {"city", "population", "capital"}
    assert isinstance(value["city"], str) and type(value["population"]) is int and type(value["capital"]) is bool


def test_without_a_schema_the_small_object_stays(server: MockServer) -> None:
    client = sdk(server)
    value = json.loads(
        _complete(client, [{"role": "user", "content": "Answer in json."}], response_format={"type": "json_object"})
    )
    assert isinstance(value, dict) and value


def test_a_schema_the_builder_cannot_honour_falls_back(server: MockServer) -> None:
    client = sdk(server)
    impossible = '{"type": "object", "properties": {"x": {"type": "integer", "minimum": 5, "maximum": 1}}}'
    prompt = f"Answer in json matching {impossible}"
    content = _complete(client, [{"role": "user", "content": prompt}], response_format={"type": "json_object"})
    assert isinstance(json.loads(content), dict)  # no 400: the prompt is not a request parameter


def test_plain_text_requests_stay_prose(server: MockServer) -> None:
    client = sdk(server)
    prompt = 'Here is some data {"properties": {"a": {"type": "string"}}}: tell me about it'
    content = _complete(client, [{"role": "user", "content": prompt}])
    assert not content.lstrip().startswith(("{", "```"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('```json\n{"properties": {"a": {"type": "string"}}}\n```', {"properties": {"a": {"type": "string"}}}),
        (
            'schema: {"type": "object", "properties": {"n": {"type": "integer"}}} thanks',
            {"type": "object", "properties": {"n": {"type": "integer"}}},
        ),
        ("no json here { not json }", None),
        (
            "[" * 5000 + "]" * 5000 + ' {"a": 1}',
            {
                "type": "object",
                "properties": {"a": {"type": "integer"}},
                "required": ["a"],
                "additionalProperties": False,
            },
        ),
    ],
)
def test_described_schema(text: str, expected: dict[str, Any] | None) -> None:
    assert described.described_schema([text]) == expected


def test_deep_nesting_in_a_prompt_is_harmless() -> None:
    assert described.described_schema(["{" + '"a":{' * 5000 + "}" * 5001]) is None
    deep = json.dumps(json.loads('{"a":' * 100 + "1" + "}" * 100))
    schema = described.described_schema([deep])
    assert schema is not None and schema["type"] == "object"
