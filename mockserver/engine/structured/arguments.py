"""A tool call's arguments, taken from the conversation where it gives them (:mod:`.bindings`) and
generated (:func:`~mockserver.engine.structured.instance_for`) where it does not.

The generated arguments are always built first, with the request's random source, so a prompt
that names nothing gets exactly what it got before. When the prompt gives values, they replace
the generated ones, and the optional parameters it does not mention are left out, as a model
leaves them out; the result is checked against the whole schema, and if it fails (a
``minProperties``, a ``dependentRequired``, ...) the generated arguments are sent instead.

A tool declared without ``parameters`` (or with ``{}``) is called with ``{}``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mockserver.config.patterns import PatternTooSlow
from mockserver.engine.structured.bindings import Binding, bind
from mockserver.engine.structured.match import matches
from mockserver.engine.structured.prompt_text import MAX_PROMPT_CHARS
from mockserver.engine.structured.schema import SchemaError, Schemas


@dataclass(frozen=True)
class Prompt:
    """The texts arguments are read from: the latest user turn (its last :data:`MAX_PROMPT_CHARS`
    characters) and the system prompt (its first :data:`MAX_PROMPT_CHARS`)."""

    latest: str = ""
    system: str = ""

    @classmethod
    def of(cls, latest: str, system: Sequence[str] = ()) -> Prompt:
        return cls(latest[-MAX_PROMPT_CHARS:], "\n".join(system)[:MAX_PROMPT_CHARS])


def prompted_arguments(name: str, parameters: Mapping[str, Any], generated: Any, prompt: Prompt) -> Any:
    """``generated`` (valid arguments of the tool ``name``) with the values ``prompt`` gives in place."""
    if not isinstance(generated, dict) or not (prompt.latest or prompt.system):
        return generated
    try:
        schemas = Schemas(parameters)
        bound = bind(name, parameters, schemas, prompt.latest, prompt.system)
        return merged(parameters, schemas, generated, bound) if bound else generated
    except (
        SchemaError,
        RecursionError,
        PatternTooSlow,
    ):  # too tangled or slow to check a value against: generated it is
        return generated


def merged(
    parameters: Mapping[str, Any], schemas: Schemas, generated: dict[str, Any], bound: Mapping[str, Binding]
) -> Any:
    required = set(schemas.flatten(parameters).get("required") or ())
    order = list(schemas.flatten(parameters).get("properties") or {})
    lean = {k: v for k, v in generated.items() if k in required}
    for answer in (lean, dict(generated)):
        answer.update((name, binding.value) for name, binding in bound.items())
        ordered = {k: answer[k] for k in order if k in answer} | {k: v for k, v in answer.items() if k not in order}
        if matches(schemas, ordered, parameters):
            return ordered
    return generated
