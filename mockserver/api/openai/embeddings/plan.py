"""The vectors of one embeddings request and the reply document that carries them.

Each input gets the vector a ``scripts:`` rule fixes for its text
(:mod:`mockserver.harness.embedding_scripts`), or else the model's deterministic vector of its
text (:mod:`mockserver.engine.embeddings`), in ``dimensions`` (the model's own by default).
``usage`` counts the inputs' cl100k_base tokens; an embedding has no output tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mockserver import errors
from mockserver.api.openai.embeddings.inputs import EmbeddingInput, read_inputs
from mockserver.api.openai.embeddings.schemas import EmbeddingRequest
from mockserver.harness.embedding_scripts import scripted_vector
from mockserver.server_state import ServerState
from mockserver.service.access import Admission

if TYPE_CHECKING:
    from mockserver.engine.embeddings import Vector


@dataclass(frozen=True)
class EmbeddingPlan:
    model: str
    inputs: list[EmbeddingInput]
    vectors: list[Vector]
    script: dict[str, Any] | None  # the first script rule that fixed a vector, for the journal

    @property
    def input_tokens(self) -> int:
        return sum(item.tokens for item in self.inputs)

    @property
    def values(self) -> int:
        """How many numbers the reply carries: what its encoding costs."""
        return sum(len(v) for v in self.vectors)


def plan_embeddings(state: ServerState, admission: Admission, body: EmbeddingRequest, path: str) -> EmbeddingPlan:
    """Read the inputs and make their vectors, or raise the live 400."""
    from mockserver.engine import embeddings  # numpy, imported on the first embeddings request only

    model = admission.model
    full = model.dimensions or 0
    if body.dimensions is not None and body.dimensions > full:
        raise dimensions_above_maximum(body.dimensions, full)
    size = body.dimensions or full
    inputs = read_inputs(body.input)
    rules = state.fixture.scripts
    made: dict[str, Vector] = {}  # a text sent twice in one request is embedded once
    script: dict[str, Any] | None = None
    for item in inputs:
        hit = scripted_vector(rules, admission, path, item.text, state.settings.time_scale) if rules else None
        if hit is None or item.text in made:
            continue
        index, vector = hit
        made[item.text] = embeddings.shortened(vector, body.dimensions)
        if script is None:
            script = {"index": index, "name": rules[index].name, "step": None}
    generated = list(dict.fromkeys(item.text for item in inputs if item.text not in made))
    made.update(zip(generated, embeddings.embed_many(model.id, generated, size), strict=True))
    return EmbeddingPlan(model.id, inputs, [made[item.text] for item in inputs], script)


def reply_values(admission: Admission, body: EmbeddingRequest) -> int:
    """How many numbers the reply will carry, from the body alone (before its inputs are read)."""
    value = body.input
    inputs = len(value) if isinstance(value, list) and value and not isinstance(value[0], int) else 1
    return inputs * (body.dimensions or admission.model.dimensions or 0)


def document(plan: EmbeddingPlan, encoding_format: str | None) -> dict[str, Any]:
    """The reply: ``data`` (one embedding per input, in order), ``model`` and ``usage``.

    ``base64`` carries each vector's little-endian float32 bytes; ``float`` (the default) the same
    float32 values as JSON numbers, so both decode to the same vector.
    """
    from mockserver.engine import embeddings

    encoded = embeddings.as_base64 if encoding_format == "base64" else _floats
    tokens = plan.input_tokens
    return {
        "object": "list",
        "data": [{"object": "embedding", "index": i, "embedding": encoded(v)} for i, v in enumerate(plan.vectors)],
        "model": plan.model,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }


def _floats(vector: Vector) -> Any:
    # Each float32 value widened to a double, which JSON writes exactly; orjson writes the array itself.
    import numpy as np

    return vector.astype(np.float64)


def dimensions_above_maximum(requested: int, maximum: int) -> errors.InvalidRequestError:
    return errors.InvalidRequestError(
        f"Invalid 'dimensions': integer above maximum value. Expected a value <= {maximum}, "
        f"but got {requested} instead.",
        param="dimensions",
        code="integer_above_max_value",
    )
