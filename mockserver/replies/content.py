"""What one answer says, for any API: prose, a JSON document, or one or more tool calls.

A scripted reply (:mod:`mockserver.harness.scripted`, chosen by :func:`mockserver.replies.planner.plan`)
takes the place of the generated one.
Prose runs as long as the prompt asks (:mod:`mockserver.engine.lengths`); a ``json_object``
answer follows the schema the prompt describes (:mod:`mockserver.engine.structured.described`);
a reply that calls a tool may call several when the request allows parallel tool calls.

The visible tokens are decided here, before any pacing, so Chat Completions and
the Responses API pick tools and shape JSON the same way, and the streamed and
non-streamed forms of one request carry the same tokens.
"""

from __future__ import annotations

import json
import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mockserver import errors
from mockserver.config.fixture import Fixture
from mockserver.config.script_rules import ScriptStep
from mockserver.engine import generation, lengths, structured, tokens
from mockserver.engine.generation import Text, TextGenerator
from mockserver.engine.structured import FunctionSpec, tool_results
from mockserver.engine.structured.described import asks_for_json_block, described_schema
from mockserver.engine.structured.prose_keys import prose_schema
from mockserver.harness import scripted
from mockserver.harness.scripted import Scripted
from mockserver.service.access import Admission

# Keeps the JSON and tool-argument stream independent of the prose stream of the same seed.
_STRUCTURED_SALT = 0x15_0A


# The output formats whose answer is a JSON document drawn from the structured source.
_JSON_FORMATS = ("json_schema", "json_object")

# Keeps the decision to call several tools independent of the arguments drawn from the same seed.
_PARALLEL_SALT = 0x9A_2A11E1


@dataclass(slots=True)
class Call:
    """One function call of a reply: the function and its argument tokens."""

    tool: FunctionSpec
    arguments: Text


@dataclass(slots=True)
class Reply:
    """What one answer says: text, or one or more function calls (parallel tool calls). Made for
    every answer and only read: not frozen, as a frozen dataclass costs several times as much to make."""

    text: Text  # the answer's tokens; with calls, every call's argument tokens one call after another
    calls: tuple[Call, ...] = ()

    @property
    def tool(self) -> FunctionSpec | None:
        """The first function called, or None for a text answer."""
        return self.calls[0].tool if self.calls else None

    def calls_within(self, produced: int) -> list[tuple[Call, int, int]]:
        """The calls that the first ``produced`` argument tokens reach, each with its ``[start, end)``
        in :attr:`text`; an output limit can cut the last one short and leave the others out."""
        reached = []
        start = 0
        for call in self.calls:
            if start >= produced:
                break
            reached.append((call, start, min(start + len(call.arguments), produced)))
            start += len(call.arguments)
        return reached


def _calls(calls: Sequence[Call]) -> Reply:
    return Reply(Text(tuple(token for call in calls for token in call.arguments.tokens)), tuple(calls))


@dataclass(slots=True)
class Writer:
    """What writing an answer reads of the server: the fixture (lengths, tokens per character,
    parallel tool calls), the text generator, and the time scale a scripted error's retry waits follow
    (taken for every request and only read: not frozen, as a frozen dataclass costs more to make)."""

    fixture: Fixture
    generator: TextGenerator
    time_scale: float


def write_reply(
    writer: Writer,
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
    parallel: bool = False,
    called: Collection[str] = (),
) -> Reply:
    """The reply's visible tokens: the ``script`` rule's reply when one applies, else generated ones.

    ``schema_param`` is where the request put a ``json_schema`` format's schema, for the 400 refusing it.
    With ``parallel`` (the request allows parallel tool calls), a reply that calls a tool may call
    several (see :func:`_parallel_tools`), and a script's ``tool_calls`` are all made; without it,
    one call: the first. ``called``: the tools the conversation already called, which a forced
    ``tool_choice`` moves on from (:mod:`mockserver.engine.structured.forced`).
    """
    # Every tool's schema is checked, not only the one the seed picks, so a bad one fails every time.
    for spec in tools:
        structured.check_schema(spec.parameters, spec.source)
    kind = output_format.get("type")
    if kind == "json_schema":  # where the schema came from, for its 400: made only for a schema to check
        fmt_source = structured.SchemaSource.response_format(output_format.get("name"), schema_param)
        structured.check_schema(output_format.get("schema") or {}, fmt_source)
    if script is not None:
        return _scripted(writer, admission, script, tools, parallel=parallel)
    if not tools and kind not in _JSON_FORMATS and not asks_for_json_block(cues.texts):
        # The usual answer, prose: it draws nothing from the structured source, so none is made (a
        # seeded random.Random costs about 6 µs, on every request's path to its first token).
        return _prose(writer, admission, seed, cues)
    rng = random.Random(seed ^ _STRUCTURED_SALT)
    prompt = structured.Prompt.of(cues.latest, cues.system)
    tool = structured.pick_tool(tools, tool_choice, answered=answered, rng=rng, prompt=prompt, called=called)
    if tool is not None:
        picked = [tool]
        if parallel:
            rng_parallel = random.Random(seed ^ _PARALLEL_SALT)
            picked += _parallel_tools(writer.fixture, tools, tool_choice, tool, rng_parallel, called)
        return _calls([Call(t, _json_text(structured.call_arguments(t, rng, prompt))) for t in picked])
    if kind == "json_schema":
        fmt_source = structured.SchemaSource.response_format(output_format.get("name"), schema_param)
        return Reply(_json_text(structured.instance_for(output_format.get("schema") or {}, rng, fmt_source)))
    if kind == "json_object":
        return Reply(_json_text(_described_instance(cues, rng) or structured.json_object(rng)))
    if asks_for_json_block(cues.texts):
        # instructor's Mode.MD_JSON: the schema in the prompt, the answer in a ```json block.
        value = _described_instance(cues, rng)
        if value is not None:
            return Reply(Text(tuple(tokens.split(f"```json\n{json.dumps(value, indent=2, ensure_ascii=False)}\n```"))))
    return _prose(writer, admission, seed, cues)


def _prose(writer: Writer, admission: Admission, seed: int, cues: generation.Cues) -> Reply:
    """Generated prose, as long as the request or the prompt asks, else a natural length for its kind."""
    fixture = writer.fixture
    per_character = fixture.tokens_per_character(cues.language)
    report = tool_results.mention(cues.results, cues.language) if cues.results else ""
    if report:
        return _reporting(writer, admission, seed, cues, report)
    length = _asked_length(fixture, admission, seed, cues, per_character)
    if length is None:
        length = lengths.natural_length(seed, *fixture.output_tokens.range_for(cues.kind))
    return Reply(writer.generator.generate(seed, length, cues.language, tokens_per_character=per_character))


def _asked_length(
    fixture: Fixture, admission: Admission, seed: int, cues: generation.Cues, per_character: float | None
) -> int | None:
    """The length the request forces (``x-mock-output-tokens``) or the prompt states ("in 200 words":
    about that many, never past the longest range, so n choices stay bounded); ``None`` when neither."""
    if admission.overrides.output_tokens is not None:
        return admission.overrides.output_tokens
    if cues.size is None:
        return None
    return lengths.around(seed, lengths.stated_tokens(cues.size, per_character), fixture.output_tokens.longest)


def _reporting(writer: Writer, admission: Admission, seed: int, cues: generation.Cues, report: str) -> Reply:
    """An answer after tool results: ``report`` (what they returned), then generated prose.

    A forced or stated length is the whole answer's, the report within it: a report longer than that
    is cut there, so "in about 40 words" after a long tool result is still about 40 words. Without
    one, the answer runs its kind's natural length, and never shorter than the report."""
    opening = tokens.split(report)
    per_character = writer.fixture.tokens_per_character(cues.language)
    length = _asked_length(writer.fixture, admission, seed, cues, per_character)
    if length is None:
        length = max(lengths.natural_length(seed, *writer.fixture.output_tokens.range_for(cues.kind)), len(opening))
    if len(opening) >= length:
        return Reply(Text(tuple(opening[:length])))
    rest = writer.generator.generate(seed, length - len(opening), cues.language, tokens_per_character=per_character)
    return Reply(rest.after(opening))  # the generated rest is made as the stream reads it


def _described_instance(cues: generation.Cues, rng: random.Random) -> Any | None:
    """An instance of the schema the messages describe (:mod:`mockserver.engine.structured.described`)
    or list in prose (:mod:`mockserver.engine.structured.prose_keys`), or ``None`` when they describe
    none or one the builder cannot honour: the prompt is no request parameter, so its schema is
    never refused with a 400."""
    schema = described_schema(cues.texts) or prose_schema(cues.texts)
    if schema is None:
        return None
    try:
        return structured.instance_for(schema, rng)
    except errors.MockAPIError:
        return None


def _parallel_tools(
    fixture: Fixture,
    tools: Sequence[FunctionSpec],
    tool_choice: str | Mapping[str, Any] | None,
    first: FunctionSpec,
    rng: random.Random,
    called: Collection[str] = (),
) -> list[FunctionSpec]:
    """The other functions a reply calls besides ``first``: with the fixture's
    ``parallel_tool_calls.probability``, one or more other callable tools (up to ``max_calls`` in
    all); never when ``tool_choice`` names one function. Under a forced choice, only work tools not
    called yet join a work tool: the output tool, which ends an agent's turn, comes alone."""
    if structured.chosen_name(tool_choice) is not None:
        return []
    callable_names = structured.callable_tools(tools, tool_choice) - {first.name}
    if structured.is_forced(tool_choice):
        if structured.is_output_tool(first):
            return []
        callable_names -= {t.name for t in tools if structured.is_output_tool(t)} | set(called)
    others = [t for t in tools if t.name in callable_names]
    settings = fixture.parallel_tool_calls
    if not others or rng.random() >= settings.probability:
        return []
    return rng.sample(others, rng.randint(1, min(settings.max_calls - 1, len(others))))


def _scripted(
    writer: Writer, admission: Admission, script: Scripted, tools: Sequence[FunctionSpec], *, parallel: bool
) -> Reply:
    reply = script.reply
    if reply.error is not None:
        raise scripted.error_for(reply.error, admission, writer.time_scale)
    if reply.tool_calls is not None:
        made = tools_for(reply, tools)
        return _calls(
            [Call(tool, Text(tuple(tokens.split(arguments)))) for tool, arguments in made[: None if parallel else 1]]
        )
    return Reply(Text(tuple(tokens.split(reply.text or ""))))


def _json_text(value: Any) -> Text:
    return Text(tuple(tokens.split(structured.dumps(value))))


def tools_for(reply: ScriptStep, tools: Sequence[FunctionSpec]) -> list[tuple[FunctionSpec, str]]:
    """Every function a ``tool_calls`` reply calls, in order, with its arguments: parallel tool calls."""
    assert reply.tool_calls is not None
    return [(next(t for t in tools if t.name == call.name), call.arguments_text()) for call in reply.tool_calls]
