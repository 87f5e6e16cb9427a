"""The body of ``POST /v1/embeddings``, as the API documents it."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

_TOKENS = {"type": "array", "items": {"type": "integer"}, "minItems": 1}
INPUT_SCHEMA = {
    "description": (
        "The text to embed: a string, an array of strings, an array of token ids (cl100k_base), or an array "
        "of such arrays. At most 2,048 inputs of at most 8,192 tokens each, and 300,000 tokens in all."
    ),
    "anyOf": [
        {"type": "string", "minLength": 1},
        {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1, "maxItems": 2048},
        {**_TOKENS, "maxItems": 8192},
        {"type": "array", "items": _TOKENS, "minItems": 1, "maxItems": 2048},
    ],
}


class EmbeddingRequest(BaseModel):
    """``POST /v1/embeddings``. ``input`` is read by :mod:`.inputs`, with the live API's errors."""

    # The validator is built on the first request (or the OpenAPI document), not at start-up.
    model_config = ConfigDict(extra="forbid", defer_build=True)

    model: str
    input: Annotated[Any, WithJsonSchema(INPUT_SCHEMA)]
    encoding_format: Literal["float", "base64"] | None = None
    dimensions: int | None = Field(default=None, ge=1)
    user: str | None = None
