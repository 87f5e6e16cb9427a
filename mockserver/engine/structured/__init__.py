"""Tool calls and structured output, shared by Chat Completions and the Responses API.

Two decisions live here, each deterministic under the request's seed:

- :func:`instance_for` builds a JSON value that validates against a JSON Schema
  (objects, arrays, ``prefixItems``, ``uniqueItems``, enums, consts, strings with
  ``pattern``/``format``, numbers with bounds and ``multipleOf``, ``anyOf``/``oneOf``/
  ``allOf``/``not`` and local ``$ref``s). It backs ``json_schema`` outputs and the
  arguments of every tool call. A schema it cannot honour (malformed, over the limits
  in :mod:`.schema`, or unsatisfiable) is refused with an OpenAI-shaped 400
  whose ``param`` says where the schema came from; see :mod:`.build` for how.
- :mod:`.described` finds the schema a prompt describes, for ``json_object`` answers.
- :func:`pick_tool` applies the tool-choice rule: with function tools present and
  ``tool_choice`` not ``none``, the reply calls a tool (the named one for a specific
  choice, otherwise a seeded pick). Under ``auto``, a conversation that already holds a
  tool result after the last user message gets text instead; a forced choice always gets
  a call, the loop-aware pick of :mod:`.forced`.

:mod:`.described` finds the schema (or example object) a prompt describes, for ``json_object``
answers and ```json code blocks.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from mockserver import errors
from mockserver.config.patterns import PatternTooSlow, within_budget
from mockserver.engine.jsonbody import dumps as dumps
from mockserver.engine.structured.arguments import Prompt as Prompt
from mockserver.engine.structured.arguments import prompted_arguments
from mockserver.engine.structured.build import Builder
from mockserver.engine.structured.forced import called_tools as called_tools
from mockserver.engine.structured.forced import declines_tools, forced_pick, named_fresh
from mockserver.engine.structured.forced import is_forced as is_forced
from mockserver.engine.structured.forced import is_output_tool as is_output_tool
from mockserver.engine.structured.schema import SchemaError, Schemas
from mockserver.engine.structured.strings import WORDS
from mockserver.engine.structured.written_calls import named_tool

TOOL_CHOICE_OPTIONS = ("none", "auto", "required")


@dataclass(frozen=True)
class SchemaSource:
    """Where a schema came from, for the 400 that refuses it."""

    param: str = "schema"
    label: str = "schema"
    code: str = "invalid_value"

    @classmethod
    def function(cls, name: str, param: str) -> SchemaSource:
        return cls(param, f"function '{name}'", "invalid_function_parameters")

    @classmethod
    def response_format(cls, name: Any, param: str) -> SchemaSource:
        return cls(param, f"response_format '{name}'")


def instance_for(schema: Any, rng: random.Random, source: SchemaSource | None = None) -> Any:
    """A value valid against ``schema``; the same ``rng`` state gives the same value.

    A schema that is malformed, asks for more than the limits in :mod:`.schema`,
    or cannot be satisfied is refused with a 400 naming ``source.param``.
    """
    with _refusing(source or SchemaSource()), within_budget():
        return Builder(Schemas(schema), rng).build(schema, 0, ())


def check_schema(schema: Any, source: SchemaSource) -> None:
    """Refuse ``schema`` now if it is malformed or over the limits, whatever the seed would pick."""
    with _refusing(source):
        Schemas(schema)


@contextmanager
def _refusing(source: SchemaSource) -> Iterator[None]:
    try:
        yield
    except (SchemaError, PatternTooSlow) as exc:  # too slow: a backtracking pattern past the check's budget
        raise _invalid_schema(source, str(exc)) from None
    except RecursionError:  # a last resort: the nesting limits are meant to stop this first
        raise _invalid_schema(source, "In context=(), the schema nests too deeply") from None


def _invalid_schema(source: SchemaSource, detail: str) -> errors.InvalidRequestError:
    return errors.InvalidRequestError(
        f"Invalid schema for {source.label}: {detail}", param=source.param, code=source.code
    )


def json_object(rng: random.Random) -> dict[str, Any]:
    """The reply of JSON mode (``json_object``): a small object with a few typed fields."""
    return {
        "answer": " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 8))),
        "confidence": round(rng.random(), 2),
        "tags": [rng.choice(WORDS).lower() for _ in range(rng.randint(1, 3))],
    }


# -- Tools --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FunctionSpec:
    """One function tool, whichever API's layout it came in."""

    name: str
    parameters: Mapping[str, Any] = field(default_factory=dict)
    param: str = "parameters"  # where the request gave the parameters, e.g. tools[0].function.parameters
    description: str = ""  # what the tool is for, as the request describes it

    @property
    def source(self) -> SchemaSource:
        return SchemaSource.function(self.name, self.param)


def call_arguments(tool: FunctionSpec, rng: random.Random, prompt: Prompt | None = None) -> Any:
    """The arguments of a call of ``tool``: ``{}`` for a tool declared without parameters, else a
    generated instance of its schema with the values the ``prompt`` gives in place (:mod:`.arguments`)."""
    if not tool.parameters:
        return {}
    generated = instance_for(tool.parameters, rng, tool.source)
    return generated if prompt is None else prompted_arguments(tool.name, tool.parameters, generated, prompt)


def pick_tool(
    tools: Sequence[FunctionSpec],
    tool_choice: str | Mapping[str, Any] | None,
    *,
    answered: bool,
    rng: random.Random,
    prompt: Prompt | None = None,
    called: Collection[str] = (),
) -> FunctionSpec | None:
    """The function the reply calls, or None for a text reply.

    A forced ``tool_choice`` (:func:`.forced.is_forced`) always gets a call: the named function, or
    the pick :func:`.forced.forced_pick` makes from the tools the conversation already ``called``.
    Otherwise, a latest user message that asks for no tool (:func:`.forced.declines_tools`) gets text;
    ``answered`` (a tool result follows the last user message) means the model has what it asked for
    and answers in text, unless the prompt names a tool not ``called`` yet; without it, one the
    ``prompt`` names (:func:`.written_calls.named_tool`) is called among the tools it may call, else a
    seeded pick.
    """
    if not tools or tool_choice == "none":
        return None
    forced = is_forced(tool_choice)
    if not forced and prompt is not None and declines_tools(prompt.latest):
        return None
    named = chosen_name(tool_choice)
    if named is not None:
        return next(t for t in tools if t.name == named)
    allowed = allowed_names(tool_choice)
    candidates = [t for t in tools if allowed is None or t.name in allowed] or list(tools)
    if answered and not forced:
        return named_fresh(candidates, called, prompt)
    picked = rng.choice(candidates)  # drawn even when the prompt names one, so the arguments draw the same
    if forced:
        return forced_pick(candidates, picked, called, prompt)
    if prompt is not None and len(candidates) > 1:
        wanted = named_tool(prompt.latest, prompt.system, [t.name for t in candidates])
        return next((t for t in candidates if t.name == wanted), picked)
    return picked


def chosen_name(tool_choice: str | Mapping[str, Any] | None) -> str | None:
    """The function a specific ``tool_choice`` names, in Chat's nested or Responses' flat layout."""
    if not isinstance(tool_choice, Mapping) or tool_choice.get("type") != "function":
        return None
    nested = tool_choice.get("function")
    name = nested.get("name") if isinstance(nested, Mapping) else tool_choice.get("name")
    return name if isinstance(name, str) else None


def allowed_names(tool_choice: str | Mapping[str, Any] | None) -> set[str] | None:
    """The function names an ``allowed_tools`` choice permits, or None when it is not one."""
    if not isinstance(tool_choice, Mapping) or tool_choice.get("type") != "allowed_tools":
        return None
    inner = tool_choice.get("allowed_tools")
    listed = inner.get("tools") if isinstance(inner, Mapping) else tool_choice.get("tools")
    names: set[str] = set()
    for entry in listed or []:
        if isinstance(entry, Mapping):
            nested = entry.get("function")
            name = nested.get("name") if isinstance(nested, Mapping) else entry.get("name")
            if isinstance(name, str):
                names.add(name)
    return names


def callable_tools(tools: Sequence[FunctionSpec], tool_choice: str | Mapping[str, Any] | None) -> set[str]:
    """The function names a reply may call under ``tool_choice``."""
    if tool_choice == "none":
        return set()
    names = {t.name for t in tools}
    named = chosen_name(tool_choice)
    if named is not None:
        return names & {named}
    allowed = allowed_names(tool_choice)
    return names if allowed is None else names & allowed


def check_tool_choice(
    tools: Sequence[FunctionSpec], tool_choice: str | Mapping[str, Any] | None, *, hosted: bool = False
) -> None:
    """Refuse a ``tool_choice`` that cannot be honoured, with the live API's wording. ``hosted``: the
    request lists hosted tools (web search, image generation, ...), which a choice may force as well."""
    if isinstance(tool_choice, str) and tool_choice not in TOOL_CHOICE_OPTIONS:
        raise errors.invalid_value("tool_choice", tool_choice, list(TOOL_CHOICE_OPTIONS))
    if tool_choice in (None, "none", "auto"):
        return
    if not tools and not hosted:
        raise errors.InvalidRequestError(
            "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
            param="tool_choice",
            code="invalid_value",
        )
    named = chosen_name(tool_choice)
    if named is not None and named not in {t.name for t in tools}:
        raise errors.InvalidRequestError(
            f"Tool choice '{named}' not found in 'tools' parameter.", param="tool_choice", code="invalid_value"
        )
