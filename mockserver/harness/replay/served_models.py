"""The models a replay serves: the fixture's, and those its recordings were made with.

A recording replays as it was recorded, with no preset or fixture entry for its model: every model
id a recorded request names that the fixture does not know is added (one the API refused too, so
that its recorded refusal replays), served by the API it was
recorded on (``/v1/messages`` is Anthropic's, the rest OpenAI's), of the kind its endpoint serves
(an embedding model gets the recorded vector length). ``GET /v1/models`` lists them. Access
rules stay the fixture's: a key whose ``models:`` list names other models still gets the 403.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mockserver.cassettes.format import MESSAGES_PATH, Record
from mockserver.config.fixture import Fixture, ModelSpec
from mockserver.config.models import MAX_EMBEDDING_DIMENSIONS, ModelAPI, ModelKind

DEFAULT_DIMENSIONS = 1536  # an embedding recorded as base64 does not show its length readily
_KIND_FOR_PATH: dict[str, ModelKind] = {"/v1/embeddings": "embedding", "/v1/moderations": "moderation"}


def with_recorded_models(fixture: Fixture, records: Iterable[Record]) -> Fixture:
    """The fixture, with a model for every id the recordings name that it does not know."""
    added: dict[str, ModelSpec] = {}
    for record in records:
        body = record.request.body
        model = body.get("model") if isinstance(body, dict) else None
        if not isinstance(model, str) or not model or model in added or fixture.model(model) is not None:
            continue
        path = record.request.path
        api: ModelAPI = "anthropic" if path.startswith(MESSAGES_PATH) else "openai"
        kind = _KIND_FOR_PATH.get(path, "chat")
        dimensions = _dimensions(record.response.body) if kind == "embedding" else None
        added[model] = ModelSpec(id=model, api=api, kind=kind, dimensions=dimensions, owned_by="recorded")
    if not added:
        return fixture
    return fixture.model_copy(update={"models": [*fixture.models, *added.values()]})


def _dimensions(body: Any) -> int:
    data = body.get("data") if isinstance(body, dict) else None
    first = data[0] if isinstance(data, list) and data and isinstance(data[0], dict) else {}
    vector = first.get("embedding")
    return min(len(vector), MAX_EMBEDDING_DIMENSIONS) if isinstance(vector, list) and vector else DEFAULT_DIMENSIONS
