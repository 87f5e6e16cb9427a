"""The served OpenAPI document, made to say what the server really does.

FastAPI's generated document is close but wrong in ways a schema-driven client or fuzzer
notices; :func:`finish` corrects it once, when it is first built:

- Errors: FastAPI documents a 422 on every operation with parameters, which the server never
  sends (every error is OpenAI-shaped, :mod:`mockserver.errors`). Each operation instead lists
  the statuses it can send, all with the one ``ErrorBody`` shape.
- Streamed replies: ``stream: true`` on Chat Completions, the Responses API and Anthropic's
  Messages answers ``text/event-stream``; the 200 documents both content types.
- Anthropic's paths document Anthropic's error shape; ``/v1/models`` answers in either.
- Faults: the configuration document shows each fault in its one-line form
  (``status=503;times=1``), and a patch may give either form, so ``FaultSpec`` is "a string or
  the object".
- ``POST /v1/responses`` needs ``input`` unless ``previous_response_id`` or ``prompt`` is given.
"""

from __future__ import annotations

import copy
from typing import Any

from mockserver.api.anthropic.family import MESSAGES_PATH

ERROR_SCHEMA = "ErrorBody"
ERROR_BODY: dict[str, Any] = {
    "type": "object",
    "title": ERROR_SCHEMA,
    "description": "Every error, in OpenAI's shape.",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["message", "type", "param", "code"],
            "properties": {
                "message": {"type": "string"},
                "type": {"type": "string"},
                "param": {"type": ["string", "null"]},
                "code": {"type": ["string", "null"]},
            },
        }
    },
}

ANTHROPIC_ERROR_SCHEMA = "AnthropicErrorBody"
ANTHROPIC_ERROR_BODY: dict[str, Any] = {
    "type": "object",
    "title": ANTHROPIC_ERROR_SCHEMA,
    "description": "Every error of the Anthropic Messages API, in Anthropic's shape.",
    "required": ["type", "error"],
    "properties": {
        "type": {"const": "error"},
        "error": {
            "type": "object",
            "required": ["type", "message"],
            "properties": {"type": {"type": "string"}, "message": {"type": "string"}},
        },
        "request_id": {"type": ["string", "null"]},
    },
}
ANTHROPIC_PREFIX = MESSAGES_PATH
EITHER_API_PREFIX = "/v1/models"  # answers in Anthropic's shape to a request with Anthropic's headers

# What each status means, wherever it is sent.
STATUS_TEXT = {
    400: "Invalid request: a bad value, unknown parameter, bad JSON, or JSON nested too deep.",
    401: "Missing or invalid API key (or, under /_mock/, admin token).",
    403: "Not permitted: the key's project, region or tier entitlement; a cross-origin browser request.",
    404: "No such model, response or route.",
    409: "Conflict with the state of the resource.",
    413: "Request body larger than max_body_bytes.",
    429: "Rate limit, quota or Ultrafast capacity; retry after the time given.",
    503: "Overloaded, reset or shutting down while the request was in flight; retryable.",
    504: "The reply would outlast max_reply_seconds.",
    529: "Overloaded (Anthropic's status for it); retryable.",
}
INFERENCE_ERRORS: tuple[int, ...] = (400, 401, 403, 404, 409, 413, 429, 503, 504)
READ_ERRORS: tuple[int, ...] = (400, 401, 403, 404, 413, 429)
CONTROL_ERRORS: tuple[int, ...] = (400, 401, 403, 404, 413)

STREAMED_PATHS = ("/v1/chat/completions", "/v1/responses", MESSAGES_PATH)
EVENT_STREAM = {
    "schema": {"type": "string", "description": "Server-sent events (stream: true): data: {...} lines, then the end."}
}


def finish(document: dict[str, Any], body_schemas: dict[str, Any]) -> dict[str, Any]:
    """The corrected document (``document`` is not changed)."""
    doc = copy.deepcopy(document)
    schemas = doc.setdefault("components", {}).setdefault("schemas", {})
    schemas.update(copy.deepcopy(body_schemas))
    schemas[ERROR_SCHEMA] = ERROR_BODY
    schemas[ANTHROPIC_ERROR_SCHEMA] = ANTHROPIC_ERROR_BODY
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    for path, operations in doc["paths"].items():
        for method, operation in operations.items():
            _document_errors(path, method, operation)
            if path in STREAMED_PATHS and method == "post":
                operation["responses"]["200"].setdefault("content", {})["text/event-stream"] = EVENT_STREAM
    _faults_as_written(schemas)
    _responses_input_required(schemas)
    return doc


def _document_errors(path: str, method: str, operation: dict[str, Any]) -> None:
    responses = operation.setdefault("responses", {})
    responses.pop("422", None)
    if path == "/health":
        return
    if path == "/ready":
        responses["503"] = {"description": "Not ready: the shared state (--state redis://...) is unreachable"}
        return
    if path.startswith("/_mock/"):
        statuses = CONTROL_ERRORS
    elif method == "post":
        statuses = INFERENCE_ERRORS
    else:
        statuses = READ_ERRORS
    schema: dict[str, Any] = {"$ref": f"#/components/schemas/{ERROR_SCHEMA}"}
    anthropic: dict[str, Any] = {"$ref": f"#/components/schemas/{ANTHROPIC_ERROR_SCHEMA}"}
    if path.startswith(ANTHROPIC_PREFIX):
        schema, statuses = anthropic, (*statuses, 529)
    elif path.startswith(EITHER_API_PREFIX):
        schema = {"anyOf": [schema, anthropic]}
    for status in statuses:
        responses.setdefault(
            str(status), {"description": STATUS_TEXT[status], "content": {"application/json": {"schema": schema}}}
        )


def _faults_as_written(schemas: dict[str, Any]) -> None:
    if "FaultSpec" not in schemas:
        return
    schemas["FaultSpecFields"] = {**schemas["FaultSpec"], "title": "FaultSpecFields"}
    schemas["FaultSpec"] = {
        "title": "FaultSpec",
        "description": "A fault: its one-line form (as the configuration shows it), or its fields.",
        "anyOf": [
            {"type": "string", "description": "One-line form, e.g. 'status=503;times=1'."},
            {"$ref": "#/components/schemas/FaultSpecFields"},
        ],
    }


def _responses_input_required(schemas: dict[str, Any]) -> None:
    schema = schemas.get("ResponseCreateRequest")
    if schema is not None:
        schema["anyOf"] = [{"required": ["input"]}, {"required": ["previous_response_id"]}, {"required": ["prompt"]}]
