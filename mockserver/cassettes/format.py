"""The cassette format, version 1: JSON Lines, one exchange per line, keys in a fixed order.

One record::

    {"version": 1, "id": "rec_000001", "recorded_at": "2026-12-01T15:20:00.123Z", "api": "chat.completions",
     "request": {"method": "POST", "path": "/v1/chat/completions", "query": "", "headers": {...}, "body": {...}},
     "response": {"status": 200, "headers": {...}, "stream": true, "headers_ms": 41.2, "duration_ms": 1830.5,
                  "events": [{"ms": 212.4, "event": null, "data": "{...}"}, ...], "body": null, "text": null}}

- ``request.headers`` holds only the headers that change the reply (``openai-beta``,
  ``anthropic-version``, ``anthropic-beta``, ``x-mock-*``); ``response.headers`` only those a client
  reads (rate limits, retry, request ids, ``content-type``). Both sorted by name.
- ``request.body`` / ``response.body`` is the JSON body; a body that is not JSON is kept as ``text``.
- A stream (``stream: true``) has its SSE ``events``, each with its offset ``ms`` from when the request
  was sent, its ``event:`` name (or null) and its ``data:``. ``headers_ms`` is when the reply's
  headers arrived, ``duration_ms`` when its last byte did.
"""

from __future__ import annotations

import itertools
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

VERSION: Literal[1] = 1
API = Literal["chat.completions", "responses", "messages", "models", "opaque"]

MESSAGES_PATH = "/v1/messages"  # Anthropic's Messages API, whose errors and events have their own shape

# Which API a path belongs to: each is recorded as such, any other path as an opaque exchange.
_API_FOR_PATH: list[tuple[str, API]] = [
    ("/v1/chat/completions", "chat.completions"),
    ("/v1/responses", "responses"),
    (MESSAGES_PATH, "messages"),
    ("/v1/models", "models"),
]


def api_for(method: str, path: str) -> API:
    for prefix, api in _API_FOR_PATH:
        if path == prefix or (api == "models" and path.startswith(prefix + "/")):
            return api
    return "opaque"


class _Record(BaseModel):
    # Built when the first cassette is read or written, not when the server starts (most never replay).
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class Event(_Record):
    ms: float = Field(ge=0, description="Offset from when the request was sent, in milliseconds.")
    event: str | None = None
    data: str


class RecordedRequest(_Record):
    method: str = Field(min_length=1)
    path: str
    query: str = ""
    headers: dict[str, str] = Field(default_factory=dict)
    body: Any = None
    text: str | None = None

    @field_validator("path")
    @classmethod
    def _absolute(cls, path: str) -> str:
        if not path.startswith("/"):
            raise ValueError("must start with '/'")
        return path


class RecordedResponse(_Record):
    status: int = Field(ge=100, le=599)
    headers: dict[str, str] = Field(default_factory=dict)
    stream: bool
    headers_ms: float = Field(ge=0)
    duration_ms: float = Field(ge=0)
    events: list[Event] = Field(default_factory=list)
    body: Any = None
    text: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> RecordedResponse:
        if not self.stream and self.events:
            raise ValueError("events given for a reply that is not a stream (stream: false)")
        offsets = [e.ms for e in self.events]
        if any(b < a for a, b in itertools.pairwise(offsets)):
            raise ValueError("events are not in the order of their offsets (ms)")
        if offsets and offsets[-1] > self.duration_ms + 1:
            raise ValueError("an event comes after duration_ms")
        return self


class Record(_Record):
    version: Literal[1]
    id: str = Field(min_length=1)
    recorded_at: str
    api: API
    request: RecordedRequest
    response: RecordedResponse


class RecordError(ValueError):
    """A line that is not a valid record; the message says why, in one line."""


def decode(line: bytes | str) -> Record:
    """One cassette line as a :class:`Record`, or :class:`RecordError` saying why not."""
    try:
        data = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise RecordError(f"not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise RecordError("a record is a JSON object, one per line")
    if data.get("version") != VERSION:
        raise RecordError(f"version is {data.get('version')!r}; this mockserver reads cassette version {VERSION}")
    try:
        return Record.model_validate(data)
    except ValidationError as exc:
        problems = [f"{'.'.join(str(p) for p in e['loc']) or 'record'}: {e['msg']}" for e in exc.errors()]
        raise RecordError("; ".join(problems)) from None


def encode(record: Record) -> bytes:
    """The record as one line, newline included: fields in their declared order, headers sorted."""
    data = record.model_dump(mode="json")
    return orjson.dumps(data) + b"\n"


def sorted_headers(headers: dict[str, str]) -> dict[str, str]:
    return {name: headers[name] for name in sorted(headers)}
