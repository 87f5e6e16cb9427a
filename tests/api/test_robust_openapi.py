"""The served OpenAPI document says what the server really does: the error statuses it sends, the
shapes it returns (faults in their one-line form), streamed replies, and the fields it requires."""

from __future__ import annotations

from typing import Any

import httpx
import jsonschema
import pytest

from mockserver import MockServer

PREVIEW = {"authorization": "Bearer sk-mock-preview"}


@pytest.fixture(scope="module")
def document(server: MockServer) -> dict[str, Any]:
    served: dict[str, Any] = httpx.get(f"{server.url}/openapi.json").json()
    return served


def validate(document: dict[str, Any], schema: dict[str, Any], instance: Any) -> None:
    root = {**schema, "components": document["components"]}
    jsonschema.Draft202012Validator(root).validate(instance)


def response_schema(document: dict[str, Any], path: str, method: str, status: int) -> dict[str, Any]:
    content = document["paths"][path][method]["responses"][str(status)]["content"]
    schema: dict[str, Any] = content["application/json"]["schema"]
    return schema


def test_no_operation_documents_the_422_it_never_sends(document: dict[str, Any]) -> None:
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            assert "422" not in operation["responses"], (method, path)


@pytest.mark.parametrize(
    ("path", "method", "statuses"),
    [
        ("/v1/chat/completions", "post", {"400", "401", "403", "404", "413", "429", "503", "504"}),
        ("/v1/responses", "post", {"400", "401", "403", "404", "413", "429", "503", "504"}),
        ("/v1/responses/{response_id}", "get", {"401", "404"}),
        ("/v1/models/{model_id}", "get", {"401", "404"}),
        ("/_mock/config", "patch", {"400", "401", "403", "413"}),
    ],
)
def test_the_error_statuses_sent_are_documented(
    document: dict[str, Any], path: str, method: str, statuses: set[str]
) -> None:
    assert statuses <= set(document["paths"][path][method]["responses"])


def test_an_error_reply_matches_its_documented_shape(server: MockServer, document: dict[str, Any]) -> None:
    reply = httpx.get(f"{server.url}/v1/responses/resp_missing", headers=PREVIEW)
    assert reply.status_code == 404
    validate(document, response_schema(document, "/v1/responses/{response_id}", "get", 404), reply.json())
    unauthenticated = httpx.get(f"{server.url}/v1/models/gpt-5.6-sol")
    assert unauthenticated.status_code == 401
    validate(document, response_schema(document, "/v1/models/{model_id}", "get", 401), unauthenticated.json())


def test_the_config_served_matches_its_schema_faults_included(server: MockServer, document: dict[str, Any]) -> None:
    server.configure(faults={"choices": ["status=503"], "probability": 0.0})
    try:
        served = httpx.get(f"{server.url}/_mock/config").json()
        assert served["faults"]["choices"] == ["status=503"]
        validate(document, response_schema(document, "/_mock/config", "get", 200), served)
    finally:
        server.reset()


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/responses"])
def test_streamed_replies_are_documented_as_event_streams(document: dict[str, Any], path: str) -> None:
    assert "text/event-stream" in document["paths"][path]["post"]["responses"]["200"]["content"]


def test_responses_requires_input_unless_a_previous_response_or_prompt_is_given(document: dict[str, Any]) -> None:
    schema = {"$ref": "#/components/schemas/ResponseCreateRequest"}
    with pytest.raises(jsonschema.ValidationError):
        validate(document, schema, {"model": "gpt-5.6-mini"})
    for body in (
        {"model": "gpt-5.6-mini", "input": "hi"},
        {"model": "gpt-5.6-mini", "previous_response_id": "resp_1"},
    ):
        validate(document, schema, body)
