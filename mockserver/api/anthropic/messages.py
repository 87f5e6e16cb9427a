"""Planning one Message: its content blocks, stop reason, usage and token schedule.

A :class:`MessagePlan` fixes everything before the first token: an optional ``thinking``
block (extended thinking, paced before the answer as reasoning is), then the answer: a
``text`` block, or a ``tool_use`` block whose ``input`` validates against the tool's
``input_schema``. Rendering only reads the plan, so ``messages.create`` and
``messages.stream`` of one request carry the same blocks and the same usage.

Thinking: ``{"type": "enabled", "budget_tokens": N}`` thinks for the whole budget (at least
1,024 tokens, and less than ``max_tokens``); ``{"type": "adaptive"}`` thinks for the fixture's
``reasoning_tokens`` of ``output_config.effort`` (``medium`` when unset). ``max_tokens`` counts
thinking and answer together; a tool call it would cut is left out, with ``stop_reason:
"max_tokens"``. ``speed: "fast"`` is served on the model's ``priority`` tier (fast mode).
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import orjson

from mockserver import errors
from mockserver.api.anthropic import cache_parts, turns
from mockserver.api.anthropic.errors import invalid_request
from mockserver.api.anthropic.schemas import CountTokensRequest, MessagesRequest
from mockserver.api.reply_sources import reply_sources
from mockserver.config.fixture import Fixture
from mockserver.engine import conversation, generation, prompt_count, structured, tokens
from mockserver.engine.generation import Text
from mockserver.engine.pacing import Schedule
from mockserver.engine.structured import FunctionSpec
from mockserver.replies import anthropic_server_tools as server_tools
from mockserver.replies.planner import Facts, Said, plan
from mockserver.server_state import ServerState
from mockserver.service.access import Admission
from mockserver.service.exchange import Exchange, Usage
from mockserver.service.prompt_cache import NO_CACHE, CacheUse

MIN_THINKING_BUDGET = 1024
ADAPTIVE_EFFORT = "medium"
FAST_TIER = "priority"  # speed: "fast" is the model's priority tier
_THINKING_SALT = 0x7B1C
_SUMMARY_SALT = 0xC0C0
_PREAMBLE_SALT = 0x9EA1
PREAMBLE_TOKENS = 12  # the sentence before a tool call under tool_choice auto ("I'll look that up.")
CUSTOM_TOOL_TYPES = (None, "custom")
_PATH = {"type": "string", "enum": ["/tmp/notes.txt"]}
CLIENT_TOOLS: tuple[tuple[str, dict[str, Any]], ...] = (  # Anthropic-defined tools the client runs, by type prefix
    (
        "bash_",
        {"type": "object", "properties": {"command": {"type": "string", "enum": ["ls"]}}, "required": ["command"]},
    ),
    (
        "text_editor_",
        {
            "type": "object",
            "properties": {"command": {"enum": ["view"]}, "path": _PATH},
            "required": ["command", "path"],
        },
    ),
    (
        "memory_",
        {
            "type": "object",
            "properties": {"command": {"enum": ["view"]}, "path": {"enum": ["/memories"]}},
            "required": ["command", "path"],
        },
    ),
    ("computer_", {"type": "object", "properties": {"action": {"enum": ["screenshot"]}}, "required": ["action"]}),
)

BlockKind = Literal[
    "thinking", "redacted_thinking", "text", "tool_use", "server_tool_use", "server_result", "compaction"
]
DIRECT = {"type": "direct"}  # the caller of a block the model wrote itself
CALLED_RESULTS = ("web_search_tool_result",)  # the result blocks that name their caller, as recorded live
REDACTED_TRIGGER = "ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING"  # the documented test prompt
INFERENCE_GEO = "global"
COMPACTION = "compact_"  # the prefix of the context_management edit that compacts the conversation
COMPACTION_TRIGGER = 150_000  # input tokens, when the edit names no trigger
COMPACTION_SUMMARY = 96  # tokens of a compaction block's summary


@dataclass(frozen=True)
class Block:
    """One content block: ``text`` holds the tokens paced on the schedule (the thinking, the answer,
    a tool call's input JSON); ``payload`` the rest of a block that has no paced tokens (a server
    tool's input, its result block, a compaction's summary)."""

    kind: BlockKind
    text: Text
    tool_id: str | None = None
    name: str | None = None
    payload: Mapping[str, Any] | None = None
    citations: tuple[Mapping[str, Any], ...] | None = None  # a text block's, when it cites web results
    unpaced: int = 0  # output tokens the block adds outside the schedule (a server tool's input, a summary)
    omitted: bool = False  # a thinking block whose text is not shown (thinking.display: "omitted")

    @property
    def signature(self) -> str:
        """A stable stand-in for the thinking block's signature: a digest of its text."""
        digest = hashlib.blake2b(self.text.text.encode(), digest_size=48).digest()
        return base64.b64encode(digest).decode()

    def content(self) -> dict[str, Any]:
        """The block as a whole Message shows it."""
        kind, payload = self.kind, self.payload or {}
        if kind == "thinking":
            return {"type": "thinking", "thinking": "" if self.omitted else self.text.text, "signature": self.signature}
        if kind == "redacted_thinking":
            return {"type": "redacted_thinking", "data": self.signature}
        if kind == "tool_use":
            return {
                "type": "tool_use",
                "id": self.tool_id,
                "name": self.name,
                "input": _json(self.text.text),
                "caller": DIRECT,
            }
        if kind == "server_tool_use":
            return {
                "type": "server_tool_use",
                "id": self.tool_id,
                "name": self.name,
                "input": dict(payload),
                "caller": DIRECT,
            }
        if kind == "server_result":
            return {**payload, "caller": DIRECT} if payload.get("type") in CALLED_RESULTS else dict(payload)
        if kind == "compaction":
            return {"type": "compaction", "content": payload.get("content")}
        return {"type": "text", "text": self.text.text, "citations": list(self.citations) if self.citations else None}

    def opening(self) -> dict[str, Any]:
        """The block as ``content_block_start`` shows it, before any delta."""
        kind = self.kind
        if kind == "thinking":
            return {"type": "thinking", "thinking": "", "signature": ""}
        if kind == "tool_use":
            return {"type": "tool_use", "id": self.tool_id, "name": self.name, "input": {}, "caller": DIRECT}
        if kind == "server_tool_use":
            return {"type": "server_tool_use", "id": self.tool_id, "name": self.name, "input": {}, "caller": DIRECT}
        if kind == "compaction":
            return {"type": "compaction", "content": None}
        if kind == "text":
            return {"type": "text", "text": "", "citations": [] if self.citations else None}
        return self.content()  # whole from the start: a result, redacted thinking


@dataclass(frozen=True)
class MessagePlan:
    id: str
    model: str
    blocks: tuple[Block, ...]
    stop_reason: str
    stop_sequence: str | None
    input_tokens: int  # the whole prompt's: usage shows the part after the last cache breakpoint
    speed: str | None  # echoed in usage when the request set it
    schedule: Schedule
    cache: CacheUse = NO_CACHE
    inference_geo: str = INFERENCE_GEO
    server_tools: Mapping[str, int] | None = None  # usage.server_tool_use, when the request declares server tools
    container: Mapping[str, Any] | None = None  # code execution's container
    advisor: str | None = None  # the advisor's model, when it was consulted: usage.iterations
    compacted: int | None = None  # the input tokens a compaction summarised: usage.iterations
    managed: bool = False  # the request sent context_management: the Message reports its applied edits
    budgeted: bool = False  # the request sent a task budget: usage.iterations lists the model's pass

    def shifted(self, seconds: float) -> MessagePlan:
        """This plan with its schedule ``seconds`` later (a wait for a capacity slot is part of the TTFT)."""
        return replace(self, schedule=self.schedule.shifted(seconds))

    @property
    def output_tokens(self) -> int:
        return sum(len(b.text) + b.unpaced for b in self.blocks)

    @property
    def thinking_tokens(self) -> int:
        return sum(len(b.text) for b in self.blocks if b.kind in ("thinking", "redacted_thinking"))

    def exchange_usage(self) -> Usage:
        cache = self.cache
        return Usage(
            self.input_tokens, self.output_tokens, self.thinking_tokens, cache.cached_tokens, cache.written_tokens
        )

    def usage(self, output_tokens: int | None = None) -> dict[str, Any]:
        cache = self.cache
        usage: dict[str, Any] = {
            "input_tokens": self.input_tokens - cache.cached_tokens - cache.written_tokens,
            "cache_creation_input_tokens": cache.written_tokens,
            "cache_read_input_tokens": cache.cached_tokens,
            "cache_creation": {
                "ephemeral_5m_input_tokens": cache.written_tokens - cache.written_1h,
                "ephemeral_1h_input_tokens": cache.written_1h,
            },
            "output_tokens": self.output_tokens if output_tokens is None else output_tokens,
            "output_tokens_details": {"thinking_tokens": self.thinking_tokens},
            "service_tier": "standard",
            "inference_geo": self.inference_geo,
        }
        if self.server_tools is not None:
            usage["server_tool_use"] = dict(self.server_tools)
        iterations = self.iterations()
        if iterations:
            usage["iterations"] = iterations
        if self.speed is not None:
            usage["speed"] = self.speed
        return usage

    def iterations(self) -> list[dict[str, Any]]:
        """``usage.iterations``: the model's passes of a Message that consulted the advisor or compacted
        the conversation, or whose request sent context management or a task budget, each with its own
        counts (empty otherwise: the field is left out)."""
        if self.advisor is None and self.compacted is None and not (self.managed or self.budgeted):
            return []
        usage = self.usage_counts()
        out = []
        if self.compacted is not None:
            summary = sum(b.unpaced for b in self.blocks if b.kind == "compaction")
            out.append(_iteration("compaction", self.compacted, summary))
        if self.advisor is not None:
            before = sum(1 for b in self.blocks if b.kind != "text") or 1
            first = max(1, usage["output"] * before // max(1, len(self.blocks)))
            out.append(_iteration("message", usage["input"], first))
            advice = _iteration("advisor_message", usage["input"] + first, server_tools.ADVICE_TOKENS)
            out.append({**advice, "model": self.advisor})
            out.append(_iteration("message", usage["input"] + first, max(0, usage["output"] - first)))
        else:
            out.append(_iteration("message", usage["input"], usage["output"]))
        return out

    def usage_counts(self) -> dict[str, int]:
        cache = self.cache
        return {"input": self.input_tokens - cache.cached_tokens - cache.written_tokens, "output": self.output_tokens}


def _iteration(kind: str, input_tokens: int, output_tokens: int) -> dict[str, Any]:
    return {
        "type": kind,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0,
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
    }


def tier_for(body: CountTokensRequest) -> str | None:
    """The ``service_tier`` the shared admission resolves: ``priority`` for fast mode."""
    return FAST_TIER if body.speed == "fast" else None


def check_speed(fixture: Fixture, body: CountTokensRequest) -> None:
    """Fast mode on a model that has none is a 400, before any quota or slot is taken."""
    model = fixture.model(body.model)
    if body.speed == "fast" and model is not None and model.api == "anthropic" and FAST_TIER not in model.tiers:
        raise errors.InvalidRequestError(f"speed: fast mode is not supported for model {model.id}", param="speed")


async def counted_input_tokens(body: CountTokensRequest) -> int:
    """:func:`input_tokens`, read and counted in pieces that give the event loop its turn (a prompt of
    tens of megabytes takes seconds to count: :mod:`mockserver.engine.prompt_count`)."""
    read = await turns.read_in_turns(body.system, body.messages)
    counted = await prompt_count.count_messages(read.texts)
    return counted.tokens + conversation.tool_definition_tokens(body.tools)


def input_tokens(body: CountTokensRequest, read: turns.Conversation | None = None) -> int:
    """The prompt's tokens, as usage and ``count_tokens`` report them (the same estimate as OpenAI's)."""
    read = read or turns.read(body.system, body.messages)
    return tokens.count_messages(read.texts) + conversation.tool_definition_tokens(body.tools)


@dataclass(slots=True)
class MessageRead:
    """A Messages request as its planning reads it: its conversation, its server tools (and the deferred
    ones), the server tools this turn runs, how long the model thinks, and the planner's facts."""

    read: turns.Conversation
    server: list[server_tools.ServerTool]
    deferred: list[server_tools.Deferred]
    context: server_tools.Context
    turn: server_tools.ServerTurn
    thinking: int
    latest: str  # the last user message's text
    facts: Facts


def plan_message(
    state: ServerState,
    admission: Admission,
    body: MessagesRequest,
    raw_body: Any,
    exchange: Exchange | None = None,
    reading: turns.Reading | None = None,
) -> MessagePlan:
    """The reply to ``body``; ``reading``: its conversation as :func:`turns.read_ahead` read it (else read here)."""
    model = admission.model
    message = read_message(state, admission, body, raw_body, exchange, reading)
    planned = plan(message.facts)
    scripted = planned.script.reply.server_tools if planned.script is not None else None
    if scripted:
        entries = [entry.model_dump() for entry in scripted]
        so_far = turns_so_far(message.read)
        turn = server_tools.plan_turn(message.server, message.deferred, message.context, so_far, scripted=entries)
        message.turn = turn
    turn, said = message.turn, planned.said
    prompt_tokens = input_tokens(body, message.read)
    blocks, compacted = _blocks(state, body, message, said, prompt_tokens, scripted=planned.script is not None)
    stop_reason, stop_sequence = _stop(body, said, turn)
    return MessagePlan(
        id=f"msg_01{state.ids.token(22)}",
        model=model.id,
        blocks=tuple(blocks),
        stop_reason=stop_reason,
        stop_sequence=stop_sequence,
        input_tokens=prompt_tokens,
        speed=body.speed,
        schedule=planned.schedule,
        cache=admission.cache,
        inference_geo=body.inference_geo or INFERENCE_GEO,
        server_tools={key: turn.requests(key) for key in server_tools.COUNTED.values()} if message.server else None,
        container=turn.container,
        advisor=_advisor_model(turn.advisor, model.id),
        compacted=compacted,
        managed=body.context_management is not None,
        budgeted=isinstance(body.output_config, Mapping) and body.output_config.get("task_budget") is not None,
    )


def read_message(
    state: ServerState,
    admission: Admission,
    body: MessagesRequest,
    raw_body: Any,
    exchange: Exchange | None,
    reading: turns.Reading | None,
) -> MessageRead:
    """The request read for its planning, once its conversation, limit, tools, thinking and format are
    checked, with the server tools this turn runs."""
    read = reading.read() if reading is not None else turns.read(body.system, body.messages)
    cache_parts.check_breakpoints(body)
    model = admission.model
    if body.max_tokens > model.max_output_tokens:
        raise invalid_request(
            f"max_tokens: {body.max_tokens} > {model.max_output_tokens}, which is the maximum allowed number of "
            f"output tokens for {model.id}"
        )
    server, deferred = server_tools.classify(body.tools)
    tools = function_tools(body.tools)
    choice: str | Mapping[str, Any] | None = tool_choice(body.tool_choice, tools, [t.name for t in server])
    forced_server = _forced_server(body.tool_choice, server, tools)
    thinking = thinking_tokens(state.fixture, body)
    if thinking and (isinstance(choice, Mapping) or choice == "required" or forced_server is not None):
        if (body.thinking or {}).get("type") == "enabled":
            raise invalid_request("Thinking may not be enabled when tool_choice forces tool use.")
        thinking = 0  # adaptive thinking: the model does not think before a forced call
    fmt = output_format(body.output_config, body.output_format)
    seed = generation.request_seed(generation.content_fields(raw_body), state.settings.seed)
    cues = generation.cues_of(
        read.user_texts,
        read.texts,
        system=read.texts[:1] if body.system else (),
        results=conversation.tool_results(read.items),
    )
    latest = read.user_texts[-1] if read.user_texts else ""
    context = _context(state, body, seed, latest)
    turn = _server_turn(body, read, server, deferred, context, choice, forced_server)
    callable_tools, choice, preamble = _called_next(read, tools, deferred, turn, choice, text=fmt["type"] == "text")
    facts = Facts(
        reply_sources(state),
        admission,
        exchange,
        seed,
        cues,
        read.items,
        callable_tools,
        choice,
        output_format=fmt,
        schema_param="output_config.format.schema",
        reasoning=thinking + preamble,  # the preamble is paced with the thinking, before the answer
        output_limit=body.max_tokens,
        stop=body.stop_sequences or (),
        whole_calls=True,  # never half a tool call
    )
    return MessageRead(read, server, deferred, context, turn, thinking, latest, facts)


def _called_next(
    read: turns.Conversation,
    tools: list[FunctionSpec],
    deferred: Sequence[server_tools.Deferred],
    turn: server_tools.ServerTurn,
    choice: str | Mapping[str, Any] | None,
    *,
    text: bool,
) -> tuple[list[FunctionSpec], str | Mapping[str, Any] | None, int]:
    """The tools the model may call now (a deferred tool only once loaded), the choice among them, and the
    tokens of a sentence before the calls: under auto (a forced choice prefills the call: nothing comes
    before it), with a ``text`` format, before the calls of this turn, a call of a tool loaded this turn
    among them."""
    named = {choice.get("name")} if isinstance(choice, Mapping) else set()  # a tool named by tool_choice is loaded
    listed = _listed_in_results(read, deferred)
    hidden = {d.name for d in deferred} - read.referenced - set(turn.found) - named - set(listed)
    callable_tools = [t for t in tools if t.name not in hidden]
    sent_choice = choice
    choice = _added_tool_choice(choice, read, callable_tools, listed)
    if not callable_tools and choice not in (None, "none", "auto"):
        choice = "auto"
    loaded_next = choice != sent_choice
    calls_next = sent_choice in ("auto", None) and (
        bool(turn.calls) or loaded_next or (bool(callable_tools) and not read.turn.answered)
    )
    return callable_tools, choice, PREAMBLE_TOKENS if calls_next and text else 0


def _blocks(
    state: ServerState, body: MessagesRequest, message: MessageRead, said: Said, prompt_tokens: int, *, scripted: bool
) -> tuple[list[Block], int | None]:
    """The Message's content blocks, in order: a compaction, the thinking, a sentence before the calls
    (not for a scripted reply), the server tools' calls and results, then the answer or the tool call;
    and the input tokens a compaction summarised (None without one)."""
    facts, turn = message.facts, message.turn
    seed, language = facts.seed, facts.cues.language
    blocks: list[Block] = []
    compacted = _compaction(state, body, prompt_tokens, seed, language, blocks)
    thought = min(message.thinking, said.reasoning)
    if thought:
        made = state.generator.generate(seed ^ _THINKING_SALT, thought, language)
        omitted = (body.thinking or {}).get("display") == "omitted"  # thought, not shown: only its signature
        kind: BlockKind = "redacted_thinking" if REDACTED_TRIGGER in message.latest else "thinking"
        blocks.append(Block(kind, made, omitted=omitted and kind == "thinking"))
    if said.reasoning > thought and not scripted:  # a sentence saying what the model will do
        blocks.append(Block("text", state.generator.generate(seed ^ _PREAMBLE_SALT, said.reasoning - thought)))
    for call in turn.calls:
        spent = tokens.count(structured.dumps(call.input)) if call.input else 0
        blocks.append(Block("server_tool_use", Text(()), call.id, call.name, call.input, unpaced=spent))
        if call.result is not None:
            blocks.append(Block("server_result", Text(()), payload=call.result))
    if not turn.paused and (len(said.text) or (not said.incomplete and (said.tool is not None or not blocks))):
        if said.tool is None:
            web = [server_tools.citation(turn.sources[0], seed)] if turn.sources else []
            blocks.extend(_cited(said.text, web or message.read.citable[:1]))
        else:
            tool_id = f"toolu_01{state.ids.token(22)}"
            blocks.append(Block("tool_use", said.text, tool_id, said.tool.name))
    return blocks, compacted


def _stop(body: MessagesRequest, said: Said, turn: server_tools.ServerTurn) -> tuple[str, str | None]:
    """Why the Message stopped, and the stop sequence it stopped at."""
    stop_reason = "max_tokens" if said.incomplete or body.max_tokens == 0 else "end_turn"
    stop_sequence = said.stop_sequence
    if turn.paused:
        stop_reason, stop_sequence = "pause_turn", None
    elif stop_reason == "end_turn" and stop_sequence is not None:
        stop_reason = "stop_sequence"
    elif stop_reason == "end_turn" and said.tool is not None:
        stop_reason = "tool_use"
    return stop_reason, stop_sequence if stop_reason == "stop_sequence" else None


def message_body(plan: MessagePlan, *, content: bool = True) -> dict[str, Any]:
    """The non-streaming ``Message``; with ``content=False``, the same with an empty ``content``, as a
    stream's ``message_start`` sends it (its blocks' content would be the whole text, made only to be
    dropped)."""
    body = {
        "id": plan.id,
        "type": "message",
        "role": "assistant",
        "model": plan.model,
        "content": [b.content() for b in plan.blocks] if content else [],
        "stop_reason": plan.stop_reason,
        "stop_sequence": plan.stop_sequence,
        "stop_details": None,
        "usage": plan.usage(),
    }
    if plan.container is not None:
        body["container"] = dict(plan.container)
    if plan.compacted is not None or plan.managed:
        body["context_management"] = {"applied_edits": []}
    return body


# -- Server tools, compaction and citations ------------------------------------------------------


def _forced_server(
    choice: Mapping[str, Any] | None, server: Sequence[server_tools.ServerTool], tools: Sequence[FunctionSpec]
) -> str | None:
    """The server tool a ``tool_choice`` forces: the one it names, or the first when ``any`` has no
    custom tool to call."""
    if not choice or not server:
        return None
    if choice.get("type") == "tool" and choice.get("name") in {t.name for t in server}:
        return str(choice["name"])
    if choice.get("type") == "any" and not tools:
        return server[0].name
    return None


def _server_turn(
    body: MessagesRequest,
    read: turns.Conversation,
    server: Sequence[server_tools.ServerTool],
    deferred: Sequence[server_tools.Deferred],
    context: server_tools.Context,
    choice: str | Mapping[str, Any] | None,
    forced_server: str | None,
) -> server_tools.ServerTurn:
    """The server tools this Message runs: at the start of a turn, or where a paused turn stopped (a
    server tool call left without its result, even beside a custom tool's answered call: the live API
    runs it then); none when a tool result answers the turn, ``tool_choice`` is ``none``, or it names a
    custom tool (under ``any`` they run first, and a custom tool is called after them)."""
    so_far = turns_so_far(read)
    turn = read.turn
    starting = not turn.server and turn.last_role == "user"
    refused = choice == "none" and forced_server is None
    answered = turn.answered and so_far.dangling is None
    if not server or answered or refused or not (starting or so_far.dangling is not None):
        return server_tools.ServerTurn()
    if forced_server is None and isinstance(choice, Mapping):  # a named custom tool: called at once
        return server_tools.ServerTurn()
    return server_tools.plan_turn(server, deferred, context, so_far, only=forced_server)


def turns_so_far(read: turns.Conversation) -> server_tools.TurnSoFar:
    """The server tool runs of the current turn: how many have a result, and the one left without."""
    turn = read.turn
    done = sum(1 for call in turn.server if call[0] in turn.results)
    dangling = next((call for call in turn.server if call[0] not in turn.results), None)
    return server_tools.TurnSoFar(done, dangling)


def _context(state: ServerState, body: MessagesRequest, seed: int, latest: str) -> server_tools.Context:
    return server_tools.Context(
        prompt=latest,
        seed=seed,
        now=state.wall_clock(),
        new_id=lambda prefix: prefix + state.ids.token(22),
        prose=lambda s, n: state.generator.generate(s, n).text,
        container=body.container if isinstance(body.container, str) else None,
    )


def _advisor_model(advisor: server_tools.ServerTool | None, model: str) -> str | None:
    if advisor is None:
        return None
    named = advisor.definition.get("model")
    return named if isinstance(named, str) else model


RESULT_READ = 20_000  # the characters of each tool result read for the names of deferred tools


def _listed_in_results(read: turns.Conversation, deferred: Sequence[server_tools.Deferred]) -> list[str]:
    """The deferred tools this turn's tool results name in their text (a client-side tool search that
    answers with the names it found, not ``tool_reference`` blocks): the live model calls them."""
    texts = [text[:RESULT_READ] for text in conversation.tool_results(read.items)]
    return [d.name for d in deferred if any(re.search(rf"\b{re.escape(d.name)}\b", text) for text in texts)]


def _added_tool_choice(
    choice: str | Mapping[str, Any] | None,
    read: turns.Conversation,
    tools: Sequence[FunctionSpec],
    listed: Sequence[str] = (),
) -> str | Mapping[str, Any] | None:
    """Under ``auto``, a deferred tool loaded in this turn after its tool results (by a ``system``
    message's ``tool_addition``, a ``tool_reference`` in a client-side tool search's result, or its name
    ``listed`` in a result's text) and not called yet is called next: the model loaded it to use it."""
    added = [*listed, *read.turn.added]
    if choice != "auto" or not added:
        return choice
    names = {t.name for t in tools} - read.turn.called
    wanted = next((n for n in reversed(added) if n in names), None)
    return {"type": "function", "name": wanted} if wanted is not None else choice


def _compaction(
    state: ServerState, body: MessagesRequest, prompt: int, seed: int, language: str, blocks: list[Block]
) -> int | None:
    """A ``compaction`` block first, when ``context_management`` asks for compaction and the prompt
    reaches its trigger: the input tokens it summarised (None when it does not compact)."""
    managed = body.context_management
    edits = managed.get("edits") if isinstance(managed, Mapping) else None
    for edit in edits if isinstance(edits, list) else []:
        if not isinstance(edit, Mapping) or not str(edit.get("type", "")).startswith(COMPACTION):
            continue
        trigger = edit.get("trigger")
        value = trigger.get("value") if isinstance(trigger, Mapping) else None
        if prompt < (value if isinstance(value, int) else COMPACTION_TRIGGER):
            return None
        summary = state.generator.generate(seed ^ _SUMMARY_SALT, COMPACTION_SUMMARY, language)
        blocks.append(Block("compaction", Text(()), payload={"content": summary.text}, unpaced=len(summary)))
        return prompt
    return None


def _cited(text: Text, citations: Sequence[Mapping[str, Any]]) -> list[Block]:
    """The answer as text blocks: one; with something to cite (a web result, a document sent with
    citations enabled), the middle third cites it in a block of its own between two plain ones, as the
    live API splits a cited answer."""
    if not citations or len(text) < 3:
        return [Block("text", text)]
    third = len(text) // 3
    return [
        Block("text", text.piece_text(0, third)),
        Block("text", text.piece_text(third, 2 * third), citations=tuple(citations)),
        Block("text", text.piece_text(2 * third, len(text))),
    ]


# -- Request parts ------------------------------------------------------------------------------


def function_tools(tools: Sequence[Mapping[str, Any]] | None) -> list[FunctionSpec]:
    """The custom tools the model may call (server tools, ``web_search_...``, run in
    :mod:`mockserver.replies.anthropic_server_tools`)."""
    specs = []
    for i, tool in enumerate(tools or []):
        name = tool.get("name")
        if not isinstance(name, str) or not name:
            raise invalid_request(f"tools.{i}.name: Field required")
        if tool.get("type") not in CUSTOM_TOOL_TYPES:
            defined = _client_tool_input(tool.get("type"))
            if defined is not None:  # a tool Anthropic defines and the client runs: bash, the text editor, ...
                specs.append(FunctionSpec(name, defined, f"tools.{i}"))
            continue
        schema = tool.get("input_schema")
        if not isinstance(schema, Mapping):
            raise invalid_request(f"tools.{i}.custom.input_schema: Field required")
        if schema.get("type") != "object":
            raise invalid_request(f"tools.{i}.custom.input_schema.type: Input should be 'object'")
        description = tool.get("description")
        described = description if isinstance(description, str) else ""
        specs.append(FunctionSpec(name, schema, f"tools.{i}.input_schema", described))
    names = [s.name for s in specs]
    if len(names) != len(set(names)):
        raise invalid_request("tools: Tool names must be unique.")
    return specs


def _client_tool_input(tool_type: Any) -> dict[str, Any] | None:
    """The input of a call of an Anthropic-defined client tool (``bash_20250124``, ``memory_20250818``, ...):
    the simplest the tool documents (a command to run, a file or the memory directory to view, a
    screenshot); None for a server tool or an unknown type."""
    if not isinstance(tool_type, str):
        return None
    return next((schema for prefix, schema in CLIENT_TOOLS if tool_type.startswith(prefix)), None)


def tool_choice(
    choice: Mapping[str, Any] | None, tools: Sequence[FunctionSpec], server: Sequence[str] = ()
) -> str | dict[str, Any] | None:
    """Anthropic's ``tool_choice`` in the shared layout: auto, any (required), none, or one named tool.
    Server tools count as tools: ``tool_choice`` may come with server tools only, and may name one
    (:func:`_forced_server` then runs it, and no custom tool is called)."""
    if choice is None:
        return "auto" if tools else None
    kind = choice.get("type")
    if kind not in ("auto", "any", "tool", "none"):
        raise invalid_request(
            f"tool_choice: Input tag '{kind}' found using 'type' does not match any of the expected tags: "
            "'auto', 'any', 'tool', 'none'"
        )
    if kind != "none" and not tools and not server:
        raise invalid_request("tool_choice may only be specified while providing tools.")
    if kind == "tool":
        name = choice.get("name")
        if not isinstance(name, str):
            raise invalid_request("tool_choice.tool.name: Field required")
        if name in server:
            return "none"
        if name not in {t.name for t in tools}:
            raise invalid_request(f"tool_choice.tool.name: Tool '{name}' not found in 'tools'.")
        return {"type": "function", "name": name}
    if not tools:
        return "none" if kind == "none" else "auto"
    return {"auto": "auto", "any": "required", "none": "none"}[str(kind)]


def thinking_tokens(fixture: Fixture, body: MessagesRequest) -> int:
    """How many tokens the model thinks before it answers (0 without extended thinking)."""
    config = body.thinking
    if config is None:
        return 0
    kind = config.get("type")
    if kind == "disabled":
        return 0
    if kind == "adaptive":
        effort = (body.output_config or {}).get("effort") or ADAPTIVE_EFFORT
        if effort not in fixture.reasoning_tokens:
            raise invalid_request(f"output_config.effort: Input should be one of {', '.join(fixture.reasoning_tokens)}")
        return fixture.reasoning_tokens[effort]
    if kind != "enabled":
        raise invalid_request(
            f"thinking: Input tag '{kind}' found using 'type' does not match any of the expected tags: "
            "'adaptive', 'disabled', 'enabled'"
        )
    budget = config.get("budget_tokens")
    if not isinstance(budget, int) or isinstance(budget, bool):
        raise invalid_request("thinking.enabled.budget_tokens: Field required")
    if budget < MIN_THINKING_BUDGET:
        raise invalid_request(
            f"thinking.enabled.budget_tokens: Input should be greater than or equal to {MIN_THINKING_BUDGET}"
        )
    if budget >= body.max_tokens:
        raise invalid_request(
            "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at "
            "https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size"
        )
    return budget


def output_format(config: Mapping[str, Any] | None, older: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``output_config.format`` (structured outputs) in the shared layout, or the older top-level
    ``output_format``, which the live API still accepts; plain text otherwise."""
    fmt = (config or {}).get("format")
    param = "output_config.format"
    if fmt is None and older is not None:
        fmt, param = older, "output_format"
    if fmt is None:
        return {"type": "text"}
    if not isinstance(fmt, Mapping) or fmt.get("type") != "json_schema":
        raise invalid_request(f"{param}.type: Input should be 'json_schema'")
    schema = fmt.get("schema")
    if not isinstance(schema, Mapping):
        raise invalid_request(f"{param}.schema: Field required")
    return {"type": "json_schema", "name": "output", "schema": schema}


def _json(text: str) -> Any:
    return orjson.loads(text) if text else {}
