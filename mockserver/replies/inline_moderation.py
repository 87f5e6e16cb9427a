"""Moderation of a reply's input and output, when the request asks for it (``moderation: {model}``).

Chat Completions and the Responses API both take a ``moderation`` parameter naming a moderation
model; the reply then carries what that model says of the prompt (``input``) and of the answer
(``output``), scored by the fixture's ``moderation.rules`` as ``/v1/moderations`` scores them
(:func:`mockserver.engine.moderation.classify`). Chat lists the results under
``moderation_results`` objects; the Responses API gives one ``moderation_result`` each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mockserver.config.moderation import ModerationRule
from mockserver.engine.generation import Text
from mockserver.engine.moderation import Part, classify

DEFAULT_MODEL = "omni-moderation-latest"


def moderation_of(
    requested: Any, rules: Sequence[ModerationRule], prompt: str, answer: str | Text, *, listed: bool
) -> dict[str, Any] | None:
    """The reply's ``moderation`` object, or None when the request asks for none. ``listed``: Chat's
    layout (each side a ``moderation_results`` list), else the Responses API's (one result each).

    ``answer`` may be the reply's :class:`~mockserver.engine.generation.Text` itself: it is read
    only when a moderation is asked for. Reading a lazy text makes every token of it at once, which
    for a reply of 1,500 tokens costs several times the rest of its planning, on the path to the
    first token of a request that asked for no moderation."""
    if not isinstance(requested, Mapping):
        return None
    if isinstance(answer, Text):
        answer = answer.text
    model = requested.get("model") if isinstance(requested.get("model"), str) else DEFAULT_MODEL

    def result(text: str) -> dict[str, Any]:
        return {"type": "moderation_result", "model": model, **classify(rules, [Part("text", text)])}

    if not listed:
        return {"input": result(prompt), "output": result(answer)}
    return {
        side: {"type": "moderation_results", "model": model, "results": [result(text)]}
        for side, text in (("input", prompt), ("output", answer))
    }
