"""The hint a 404 for an unknown model id carries: the model the caller most likely meant.

A preset's name is not a model id (``--preset claude-opus-4.8-fast`` serves ``claude-opus-4-8``),
and ids are easily spelled with dots for dashes or with a word added (``claude-opus-4-8-fast``).
The live 404's words stay as they are; one sentence is added after them, naming a model the key
may see on that API, or, for a preset's name whose models are not served, how to serve them. Ids
the key may not see are never named.
"""

from __future__ import annotations

import functools

from mockserver.config import presets
from mockserver.config.fixture import Fixture, ModelAPI


def hint(fixture: Fixture, model_id: str, api: ModelAPI, visible: list[str]) -> str | None:
    """One sentence for the 404 of ``model_id``, or None when nothing served is spelled like it.
    ``visible``: the ids the key may see on ``api``."""
    if model_id in presets.names():
        ids = _preset_models(model_id, api)
        served = [known for known in ids if known in visible]
        if served:
            return f"Did you mean `{served[0]}`, the model of preset `{model_id}`?"
        if ids and model_id not in fixture.presets:
            return f"`{model_id}` is a preset: serve it with `--preset {model_id}`, and ask for its model `{ids[0]}`."
    asked = _spelled(model_id)
    for known in visible:
        form = _spelled(known)
        # The same id spelled otherwise, or with a word more or less at its end (`-fast`): a guess worth
        # reading. Any other unknown id keeps the live 404 as it is, word for word.
        if asked == form or asked.startswith(f"{form}-") or form.startswith(f"{asked}-"):
            return f"Did you mean `{known}`?"
    return None


def _spelled(model_id: str) -> str:
    """The id with case, dots and underscores set aside: ``Claude_Opus.4.8`` is ``claude-opus-4-8``."""
    return model_id.lower().replace(".", "-").replace("_", "-")


@functools.cache
def _preset_models(name: str, api: ModelAPI) -> tuple[str, ...]:
    """The ids of a built-in preset's models on ``api`` (the files ship with the package: read once)."""
    return tuple(
        str(model["id"])
        for model in presets.load(name)["models"]
        if isinstance(model, dict) and model.get("api", "openai") == api and "id" in model
    )
