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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import orjson

from mockserver import errors
from mockserver.api.anthropic import cache_parts, turns
from mockserver.api.anthropic.errors import invalid_request
from mockserver.api.anthropic.schemas import CountTokensRequest, MessagesRequest
from mockserver.api.routing import reply_sources
from mockserver.config.fixture import Fixture
from mockserver.engine import conversation, generation, prompt_count, tokens
from mockserver.engine.generation import Text
from mockserver.engine.pacing import Schedule
from mockserver.engine.structured import FunctionSpec
from mockserver.replies.planner import Facts, plan
from mockserver.server_state import ServerState
from mockserver.service.access import Admission
from mockserver.service.exchange import Exchange, Usage
from mockserver.service.prompt_cache import NO_CACHE, CacheUse

MIN_THINKING_BUDGET = 1024
ADAPTIVE_EFFORT = "medium"
FAST_TIER = "priority"  # speed: "fast" is the model's priority tier
_THINKING_SALT = 0x7B1C
CUSTOM_TOOL_TYPES = (None, "custom")

BlockKind = Literal["thinking", "text", "tool_use"]


@dataclass(frozen=True)
class Block:
    kind: BlockKind
    text: Text  # the thinking, the answer, or the tool input's JSON, as tokens
    tool_id: str | None = None
    name: str | None = None

    @property
    def signature(self) -> str:
        """A stable stand-in for the thinking block's signature: a digest of its text."""
        digest = hashlib.blake2b(self.text.text.encode(), digest_size=48).digest()
        return base64.b64encode(digest).decode()

    def content(self) -> dict[str, Any]:
        """The block as a whole Message shows it."""
        if self.kind == "thinking":
            return {"type": "thinking", "thinking": self.text.text, "signature": self.signature}
        if self.kind == "tool_use":
            return {"type": "tool_use", "id": self.tool_id, "name": self.name, "input": _json(self.text.text)}
        return {"type": "text", "text": self.text.text, "citations": None}

    def opening(self) -> dict[str, Any]:
        """The block as ``content_block_start`` shows it, before any delta."""
        if self.kind == "thinking":
            return {"type": "thinking", "thinking": "", "signature": ""}
        if self.kind == "tool_use":
            return {"type": "tool_use", "id": self.tool_id, "name": self.name, "input": {}}
        return {"type": "text", "text": "", "citations": None}


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

    def shifted(self, seconds: float) -> MessagePlan:
        """This plan with its schedule ``seconds`` later (a wait for a capacity slot is part of the TTFT)."""
        return replace(self, schedule=self.schedule.shifted(seconds))

    @property
    def output_tokens(self) -> int:
        return sum(len(b.text) for b in self.blocks)

    @property
    def thinking_tokens(self) -> int:
        return sum(len(b.text) for b in self.blocks if b.kind == "thinking")

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
            "service_tier": "standard",
        }
        if self.speed is not None:
            usage["speed"] = self.speed
        return usage


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


def plan_message(
    state: ServerState,
    admission: Admission,
    body: MessagesRequest,
    raw_body: Any,
    exchange: Exchange | None = None,
    reading: turns.Reading | None = None,
) -> MessagePlan:
    """The reply to ``body``; ``reading``: its conversation as :func:`turns.read_ahead` read it (else read here)."""
    read = reading.read() if reading is not None else turns.read(body.system, body.messages)
    cache_parts.check_breakpoints(body)
    model = admission.model
    if body.max_tokens > model.max_output_tokens:
        raise invalid_request(
            f"max_tokens: {body.max_tokens} > {model.max_output_tokens}, which is the maximum allowed number of "
            f"output tokens for {model.id}"
        )
    tools = function_tools(body.tools)
    choice = tool_choice(body.tool_choice, tools)
    thinking = thinking_tokens(state.fixture, body)
    if thinking and isinstance(choice, Mapping | str) and choice not in ("auto", "none"):
        raise invalid_request("Thinking may not be enabled when tool_choice forces tool use.")
    fmt = output_format(body.output_config)
    seed = generation.request_seed(generation.content_fields(raw_body), state.settings.seed)
    cues = generation.cues_of(
        read.user_texts,
        read.texts,
        system=read.texts[:1] if body.system else (),
        results=conversation.tool_results(read.items),
    )
    planned = plan(
        Facts(
            reply_sources(state),
            admission,
            exchange,
            seed,
            cues,
            read.items,
            tools,
            choice,
            output_format=fmt,
            schema_param="output_config.format.schema",
            reasoning=thinking,
            output_limit=body.max_tokens,
            stop=body.stop_sequences or (),
            whole_calls=True,  # never half a tool call
        )
    )
    said = planned.said
    blocks = []
    if said.reasoning:
        blocks.append(Block("thinking", state.generator.generate(seed ^ _THINKING_SALT, said.reasoning, cues.language)))
    if len(said.text) or (not said.incomplete and (said.tool is not None or not blocks)):
        if said.tool is None:
            blocks.append(Block("text", said.text))
        else:
            tool_id = f"toolu_01{state.ids.token(22)}"
            blocks.append(Block("tool_use", said.text, tool_id, said.tool.name))
    stop_reason = "max_tokens" if said.incomplete or body.max_tokens == 0 else "end_turn"
    stop_sequence = said.stop_sequence
    if stop_reason == "end_turn" and stop_sequence is not None:
        stop_reason = "stop_sequence"
    elif stop_reason == "end_turn" and said.tool is not None:
        stop_reason = "tool_use"
    return MessagePlan(
        id=f"msg_01{state.ids.token(22)}",
        model=model.id,
        blocks=tuple(blocks),
        stop_reason=stop_reason,
        stop_sequence=stop_sequence if stop_reason == "stop_sequence" else None,
        input_tokens=input_tokens(body, read),
        speed=body.speed,
        schedule=planned.schedule,
        cache=admission.cache,
    )


def message_body(plan: MessagePlan) -> dict[str, Any]:
    """The non-streaming ``Message``."""
    return {
        "id": plan.id,
        "type": "message",
        "role": "assistant",
        "model": plan.model,
        "content": [b.content() for b in plan.blocks],
        "stop_reason": plan.stop_reason,
        "stop_sequence": plan.stop_sequence,
        "stop_details": None,
        "usage": plan.usage(),
    }


# -- Request parts ------------------------------------------------------------------------------


def function_tools(tools: Sequence[Mapping[str, Any]] | None) -> list[FunctionSpec]:
    """The custom tools the model may call; server tools (``web_search_...``) are accepted and never called."""
    specs = []
    for i, tool in enumerate(tools or []):
        name = tool.get("name")
        if not isinstance(name, str) or not name:
            raise invalid_request(f"tools.{i}.name: Field required")
        if tool.get("type") not in CUSTOM_TOOL_TYPES:
            continue
        schema = tool.get("input_schema")
        if not isinstance(schema, Mapping):
            raise invalid_request(f"tools.{i}.custom.input_schema: Field required")
        if schema.get("type") != "object":
            raise invalid_request(f"tools.{i}.custom.input_schema.type: Input should be 'object'")
        specs.append(FunctionSpec(name, schema, f"tools.{i}.input_schema"))
    names = [s.name for s in specs]
    if len(names) != len(set(names)):
        raise invalid_request("tools: Tool names must be unique.")
    return specs


def tool_choice(choice: Mapping[str, Any] | None, tools: Sequence[FunctionSpec]) -> str | dict[str, Any] | None:
    """Anthropic's ``tool_choice`` in the shared layout: auto, any (required), none, or one named tool."""
    if choice is None:
        return "auto" if tools else None
    kind = choice.get("type")
    if kind not in ("auto", "any", "tool", "none"):
        raise invalid_request(
            f"tool_choice: Input tag '{kind}' found using 'type' does not match any of the expected tags: "
            "'auto', 'any', 'tool', 'none'"
        )
    if kind != "none" and not tools:
        raise invalid_request("tool_choice may only be specified while providing tools.")
    if kind == "tool":
        name = choice.get("name")
        if not isinstance(name, str):
            raise invalid_request("tool_choice.tool.name: Field required")
        if name not in {t.name for t in tools}:
            raise invalid_request(f"tool_choice.tool.name: Tool '{name}' not found in 'tools'.")
        return {"type": "function", "name": name}
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


def output_format(config: Mapping[str, Any] | None) -> dict[str, Any]:
    """``output_config.format`` (structured outputs) in the shared layout; plain text otherwise."""
    fmt = (config or {}).get("format")
    if fmt is None:
        return {"type": "text"}
    if not isinstance(fmt, Mapping) or fmt.get("type") != "json_schema":
        raise invalid_request("output_config.format.type: Input should be 'json_schema'")
    schema = fmt.get("schema")
    if not isinstance(schema, Mapping):
        raise invalid_request("output_config.format.schema: Field required")
    return {"type": "json_schema", "name": "output", "schema": schema}


def _json(text: str) -> Any:
    return orjson.loads(text) if text else {}
