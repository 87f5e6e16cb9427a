"""What one answer says, for either API: prose, a JSON document, or a tool call's arguments.

A scripted reply (:mod:`mockserver.harness.scripts`) takes the place of the generated one.

The visible tokens are decided here, before any pacing, so Chat Completions and
the Responses API pick tools and shape JSON the same way, and the streamed and
non-streamed forms of one request carry the same tokens.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mockserver import errors
from mockserver.engine import generation, lengths, structured, tokens
from mockserver.engine.generation import Text
from mockserver.engine.structured import FunctionSpec
from mockserver.engine.structured.described import asks_for_json_block, described_schema
from mockserver.harness import scripts
from mockserver.harness.scripts import Scripted
from mockserver.runtime import ServerState
from mockserver.service.access import Admission

# Keeps the JSON and tool-argument stream independent of the prose stream of the same seed.
_STRUCTURED_SALT = 0x15_0A


@dataclass(frozen=True)
class Reply:
    text: Text  # the answer's tokens, or the tool call's argument tokens
    tool: FunctionSpec | None = None


def plan_reply(
    state: ServerState,
    admission: Admission,
    *,
    seed: int,
    cues: generation.Cues,
    tools: Sequence[FunctionSpec],
    tool_choice: str | Mapping[str, Any] | None,
    answered: bool,
    output_format: Mapping[str, Any],
    schema_param: str,
    script: Scripted | None = None,
) -> Reply:
    """The reply's visible tokens: the ``script`` rule's reply when one applies, else generated ones.

    ``schema_param`` is where the request put a ``json_schema`` format's schema, for the 400 refusing it.
    """
    rng = random.Random(seed ^ _STRUCTURED_SALT)
    # Every tool's schema is checked, not only the one the seed picks, so a bad one fails every time.
    for spec in tools:
        structured.check_schema(spec.parameters, spec.source)
    kind = output_format.get("type")
    fmt_source = structured.SchemaSource.response_format(output_format.get("name"), schema_param)
    if kind == "json_schema":
        structured.check_schema(output_format.get("schema") or {}, fmt_source)
    if script is not None:
        return _scripted(state, admission, script, tools)
    tool = structured.pick_tool(tools, tool_choice, answered=answered, rng=rng)
    if tool is not None:
        return Reply(_json_text(structured.instance_for(tool.parameters, rng, tool.source)), tool)
    if kind == "json_schema":
        return Reply(_json_text(structured.instance_for(output_format.get("schema") or {}, rng, fmt_source)))
    if kind == "json_object":
        return Reply(_json_text(_described_instance(cues, rng) or structured.json_object(rng)))
    if asks_for_json_block(cues.texts):
        # instructor's Mode.MD_JSON: the schema in the prompt, the answer in a ```json block.
        value = _described_instance(cues, rng)
        if value is not None:
            return Reply(Text(tuple(tokens.split(f"```json\n{json.dumps(value, indent=2, ensure_ascii=False)}\n```"))))
    length = admission.overrides.output_tokens
    if length is None:
        length = lengths.natural_length(seed, *state.fixture.output_tokens.range_for(cues.kind))
    per_character = state.fixture.tokens_per_character(cues.language)
    return Reply(state.generator.generate(seed, length, cues.language, tokens_per_character=per_character))


def _described_instance(cues: generation.Cues, rng: random.Random) -> Any | None:
    """An instance of the schema the messages describe (:mod:`mockserver.engine.structured.described`),
    or ``None`` when they describe none or one the builder cannot honour: the prompt is no request
    parameter, so its schema is never refused with a 400."""
    schema = described_schema(cues.texts)
    if schema is None:
        return None
    try:
        return structured.instance_for(schema, rng)
    except errors.MockAPIError:
        return None


def _scripted(state: ServerState, admission: Admission, script: Scripted, tools: Sequence[FunctionSpec]) -> Reply:
    reply = script.reply
    if reply.error is not None:
        raise scripts.error_for(reply.error, admission, state.settings.time_scale)
    if reply.tool_calls is not None:
        tool, arguments = scripts.tool_for(reply, tools)
        return Reply(Text(tuple(tokens.split(arguments))), tool)
    return Reply(Text(tuple(tokens.split(reply.text or ""))))


def _json_text(value: Any) -> Text:
    return Text(tuple(tokens.split(structured.dumps(value))))
