"""The Responses API: plan a response, render it whole, and keep it for later turns.

A :class:`ResponsePlan` fixes everything up front: the reasoning (and its summary),
the visible answer or function call, where ``max_output_tokens`` cut it, the usage
and the token schedule. The non-streaming body, the stream in
:mod:`mockserver.api.openai.responses.event_stream` and the stored copy all read the same plan.

Token layout on the schedule: reasoning tokens first (the hidden part, then the
summary's tokens), then the visible tokens. ``max_output_tokens`` counts them all,
as on the live API, so a low limit can end a response inside its reasoning.
"""

from __future__ import annotations

import base64
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import orjson

from mockserver import errors
from mockserver.api.openai import obfuscation
from mockserver.api.openai.responses import compaction, echo, input_items, logprobs
from mockserver.api.openai.responses.prompt_fit import Fitted, read_context
from mockserver.api.openai.schemas import ResponseCreateRequest
from mockserver.api.reply_sources import reply_sources
from mockserver.engine import generation, tokens
from mockserver.engine.conversation import (
    ConversationItem,
    function_spec,
    function_tools,
    output_format,
    prompt_messages,
    system_texts,
    tool_definition_tokens,
    tool_results,
)
from mockserver.engine.generation import Text
from mockserver.engine.pacing import Schedule
from mockserver.engine.structured import FunctionSpec, check_tool_choice
from mockserver.replies.commentary import commentary, narrates
from mockserver.replies.hosted_tools import Hosted, HostedCall, citations_for, plan_hosted
from mockserver.replies.inline_moderation import moderation_of
from mockserver.replies.planner import Facts, Said, plan
from mockserver.server_state import ServerState
from mockserver.service import output_limits, reasoning
from mockserver.service.access import Admission
from mockserver.service.exchange import Exchange, Usage
from mockserver.service.prompt_cache import NO_CACHE, CacheUse
from mockserver.state.responses import DeferredRecord, StoredResponse

ENCRYPTED_REASONING_INCLUDE = "reasoning.encrypted_content"
BILLING: dict[str, Any] = {"payer": "developer"}  # who pays for the response: the API key's project


@dataclass(frozen=True)
class ReasoningPart:
    id: str
    tokens: int  # reasoning tokens produced (after any cut), summary included
    summary: Text  # the summary tokens produced, the last ones of the reasoning
    summary_cut: bool
    encrypted: bool

    @property
    def hidden_tokens(self) -> int:
        return self.tokens - len(self.summary)

    def item(self) -> dict[str, Any]:
        summary = [{"type": "summary_text", "text": self.summary.text}] if self.summary else []
        item: dict[str, Any] = {"id": self.id, "type": "reasoning", "summary": summary, "content": []}
        if self.encrypted:
            item["encrypted_content"] = base64.b64encode(f"mock:{self.id}:{self.tokens}".encode()).decode()
        return item


@dataclass(frozen=True)
class AnswerPart:
    """The visible output item: a message, or a function call when ``name`` is set."""

    id: str
    text: Text  # the message text, or the call's arguments
    complete: bool
    name: str | None = None
    call_id: str | None = None
    namespace: str | None = None  # the namespace of a called function that a tool search loads
    annotations: tuple[dict[str, Any], ...] = ()  # the message's url_citation annotations
    phase: str = "final_answer"  # a message's: the answer, or "commentary" before tool calls
    top_logprobs: int | None = None  # with logprobs asked for (include), the alternatives per token

    def logprobs(self, lo: int = 0, hi: int | None = None) -> list[dict[str, Any]]:
        """The ``logprobs`` of the message's tokens ``lo`` to ``hi`` (all by default): none unless asked for."""
        if self.top_logprobs is None:
            return []
        return logprobs.entries(self.text.pieces(lo, len(self.text) if hi is None else hi), self.top_logprobs)

    @property
    def status(self) -> str:
        return "completed" if self.complete else "incomplete"

    def item(self, status: str | None = None) -> dict[str, Any]:
        status = status or self.status
        if self.name is not None:
            call = {
                "id": self.id,
                "type": "function_call",
                "call_id": self.call_id,
                "name": self.name,
                "arguments": self.text.text if status != "in_progress" else "",
                "status": status,
            }
            return call if self.namespace is None else {**call, "namespace": self.namespace}
        content = [output_text(self.text.text, self.annotations, self.logprobs())] if status != "in_progress" else []
        return {
            "id": self.id,
            "type": "message",
            "status": status,
            "role": "assistant",
            "content": content,
            "phase": self.phase,
        }


def output_text(
    text: str, annotations: Sequence[dict[str, Any]] = (), token_logprobs: Sequence[dict[str, Any]] = ()
) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": list(annotations), "logprobs": list(token_logprobs)}


@dataclass(frozen=True)
class HostedItem:
    """A hosted tool's output item (:mod:`mockserver.replies.hosted_tools`), with its id."""

    id: str
    call: HostedCall
    call_id: str | None = None

    def item(self, *, done: bool = True) -> dict[str, Any]:
        fields = self.call.done if done else self.call.added
        extra = {"call_id": self.call_id} if self.call_id is not None else {}
        return {"id": self.id, **fields, **extra}


@dataclass(frozen=True)
class ResponsePlan:
    id: str
    created_at: int
    duration: float  # seconds from creation to completion, on the schedule
    project: str
    echo: dict[str, Any]  # request settings the Response object reports back
    input_tokens: int
    reasoning: ReasoningPart | None
    answers: tuple[AnswerPart, ...]  # the message, or one function call per tool called
    incomplete: bool
    schedule: Schedule
    sent: tuple[ConversationItem, ...]  # the conversation it continues and its input: see conversation
    sent_input: str | list[Any] | None  # the request's ``input``, listed as items when the response is stored
    store: bool
    background: bool
    cache: CacheUse = NO_CACHE
    obfuscate: bool = True  # streamed deltas carry ``obfuscation`` (stream_options.include_obfuscation)
    hosted: tuple[HostedItem, ...] = ()  # the hosted tools' calls, before the answer
    moderation: dict[str, Any] | None = None  # what the requested moderation model says, once final
    web_searches: int = 0
    image_tokens: int = 0
    compaction: dict[str, Any] | None = None  # the compaction item after the answer (context_management)

    def shifted(self, seconds: float) -> ResponsePlan:
        """This plan with its schedule ``seconds`` later (a wait for a capacity slot is part of the TTFT)."""
        return replace(self, schedule=self.schedule.shifted(seconds))

    @property
    def conversation(self) -> tuple[ConversationItem, ...]:
        """What the next turn continues: what this one sent, then its output. Made when read, as it
        reads every token of the output: when the stored response's record is made (see :func:`remember`)."""
        return (*self.sent, *_output_items(self.reasoning, self.answers))

    @property
    def reasoning_tokens(self) -> int:
        return self.reasoning.tokens if self.reasoning else 0

    @property
    def output_tokens(self) -> int:
        return self.reasoning_tokens + sum(len(a.text) for a in self.answers)

    @property
    def status(self) -> str:
        return "incomplete" if self.incomplete else "completed"

    def output(self) -> list[dict[str, Any]]:
        items = [self.reasoning.item()] if self.reasoning else []
        compacted = [self.compaction] if self.compaction is not None else []
        return items + [h.item() for h in self.hosted] + [a.item() for a in self.answers] + compacted

    def exchange_usage(self) -> Usage:
        cached, written = self.cache.cached_tokens, self.cache.written_tokens
        return Usage(self.input_tokens, self.output_tokens, self.reasoning_tokens, cached, written)

    def usage(self) -> dict[str, Any]:
        cached, written = self.cache.cached_tokens, self.cache.written_tokens
        return {
            "input_tokens": self.input_tokens,
            "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": written},
            "output_tokens": self.output_tokens,
            "output_tokens_details": {"reasoning_tokens": self.reasoning_tokens},
            "total_tokens": self.input_tokens + self.output_tokens,
        }


@dataclass(slots=True)
class ResponseRead:
    """A Responses request as its planning reads it: the conversation it sends (earlier turns first) and
    the part of it the model reads, its hosted tools' calls, its output format, and the planner's facts."""

    sent: list[ConversationItem]
    context: list[ConversationItem]
    hosted: Hosted
    fmt: dict[str, Any]
    facts: Facts
    latest: str  # the last user message's text


def plan_response(
    state: ServerState,
    admission: Admission,
    body: ResponseCreateRequest,
    raw_body: dict[str, Any],
    previous: StoredResponse | None = None,
    exchange: Exchange | None = None,
    fitted: Fitted | None = None,
) -> ResponsePlan:
    """Everything about the response, fixed up front. ``previous`` is the stored response
    ``previous_response_id`` names, read beforehand by :func:`earlier_turn` (planning does not wait).
    ``fitted`` is the conversation as the window check fitted it
    (:mod:`mockserver.api.openai.responses.prompt_fit`): the model reads only the items it kept."""
    fixture = state.fixture
    read = read_response(state, admission, body, raw_body, previous, exchange, fitted)
    planned = plan(read.facts)
    said, schedule = planned.said, planned.schedule
    reasoning_part = _reasoning_part(state, admission, body, read.facts, said.reasoning)
    answers = _answers(state, body, read, said)
    hosted = read.hosted
    hosted_items = tuple(
        HostedItem(state.ids.prefixed(c.prefix), c, f"call_{state.ids.token(24)}" if c.call_id else None)
        for c in hosted.calls
    )
    context = read.context
    input_tokens = fitted.input_tokens if fitted else count_input_tokens(body.instructions, context, body.tools)
    total = input_tokens + (reasoning_part.tokens if reasoning_part else 0) + sum(len(a.text) for a in answers)
    compacts = not said.incomplete and compaction.compacts(body.context_management, total)
    effort = reasoning.effort_for(fixture, admission, body.reasoning.effort if body.reasoning else None)
    return ResponsePlan(
        id=state.ids.prefixed("resp"),
        created_at=int(state.wall_clock()),
        duration=schedule.end - schedule.start,
        project=admission.account.project,
        echo=echo.settings(
            body,
            admission,
            read.fmt,
            effort,
            loaded=_loaded_by_search(body.input, context, body.tools),
            added=_added_tools(body.input),
        ),
        input_tokens=input_tokens,
        reasoning=reasoning_part,
        answers=answers,
        incomplete=said.incomplete,
        schedule=schedule,
        sent=tuple(read.sent),
        sent_input=body.input,
        store=body.store is not False,
        background=bool(body.background),
        cache=admission.cache,
        obfuscate=obfuscation.wanted(body.stream_options),
        hosted=hosted_items,
        moderation=moderation_of(body.moderation, fixture.moderation.rules, read.latest, said.text, listed=False),
        web_searches=hosted.web_searches,
        image_tokens=hosted.image_tokens,
        compaction=compaction.item(state.ids.prefixed("cmp"), total) if compacts else None,
    )


def read_response(
    state: ServerState,
    admission: Admission,
    body: ResponseCreateRequest,
    raw_body: dict[str, Any],
    previous: StoredResponse | None,
    exchange: Exchange | None,
    fitted: Fitted | None,
) -> ResponseRead:
    """The request read for its planning, once its limit, input, tools and format are checked."""
    fixture = state.fixture
    output_limits.check_limit(admission, "max_output_tokens", body.max_output_tokens)
    if body.background and body.store is False:
        raise errors.background_without_store()
    if body.input is None and body.previous_response_id is None and body.prompt is None:
        raise errors.missing_parameter("input")
    sent = list(fitted.context) if fitted else read_context(body.input, body.previous_response_id, previous)
    context = fitted.kept if fitted else sent
    top_level = function_tools(body.tools)
    tools = top_level + _namespaced(body.tools) + _added(body.input)
    check_tool_choice(tools, body.tool_choice, hosted=len(body.tools or ()) > len(top_level))
    latest = next((text for kind, text in reversed(context) if kind == "user"), "")
    hosted = plan_hosted(
        body.tools, body.tool_choice, context, latest=latest, data=fixture.hosted_tools, include=body.include or ()
    )
    prompt_texts = [body.instructions or "", *(text for _, text in context)]
    fmt = output_format(body.text.format if body.text else None, prompt_texts, param="text.format")
    seed = generation.request_seed(raw_body, state.settings.seed, body.seed)
    cues = generation.cues_of(
        [t for kind, t in context if kind == "user"],
        prompt_texts,
        system=[body.instructions or "", *system_texts(context)],
        results=tool_results(context),
    )
    effort_param = body.reasoning.effort if body.reasoning else None
    facts = Facts(
        reply_sources(state),
        admission,
        exchange,
        seed,
        cues,
        context,
        tools,
        _choice_after(hosted, body.tool_choice),
        output_format=fmt,
        schema_param="text.format.schema",
        parallel=body.parallel_tool_calls is not False,
        reasoning=reasoning.reasoning_tokens_for(fixture, admission, effort_param),
        output_limit=body.max_output_tokens,
        scripts_strict=fixture.scripts_strict,
    )
    return ResponseRead(sent, context, hosted, fmt, facts, latest)


def _reasoning_part(
    state: ServerState, admission: Admission, body: ResponseCreateRequest, facts: Facts, made: int
) -> ReasoningPart | None:
    """The reasoning item: ``made`` tokens of the planned reasoning, the summary last. A model that reports an
    effort (gpt-5.6-sol: medium) sends its reasoning item, encrypted, to a client that asks for it, even when
    the fixture plans no reasoning tokens at that effort, as the live one does; one whose fixture entry sets
    reasoning_item_unasked sends it (not encrypted) to every client."""
    fixture, planned_reasoning = state.fixture, facts.reasoning
    summary_style = body.reasoning.summary_style if body.reasoning else None
    summary_full = state.generator.generate(
        facts.seed ^ 0x5A,
        reasoning.summary_tokens(summary_style, planned_reasoning),
        facts.cues.language,
        tokens_per_character=fixture.tokens_per_character(facts.cues.language),
    )
    hidden_made = min(planned_reasoning - len(summary_full), made)
    model = admission.model
    include = body.include or []
    reports_effort = (
        model.reasoning
        and (body.reasoning.effort if body.reasoning else None) is None
        and model.reported_effort not in (None, "none")
        and (model.reasoning_item_unasked or ENCRYPTED_REASONING_INCLUDE in include)
    )
    if planned_reasoning <= 0 and not reports_effort:
        return None
    return ReasoningPart(
        id=state.ids.prefixed("rs"),
        tokens=made,
        summary=summary_full.cut(made - hidden_made),
        summary_cut=made < planned_reasoning and made > hidden_made,
        encrypted=ENCRYPTED_REASONING_INCLUDE in include,
    )


def _answers(state: ServerState, body: ResponseCreateRequest, read: ResponseRead, said: Said) -> tuple[AnswerPart, ...]:
    """The visible output items: one function call per tool called (an output limit can cut the last one
    short), or the message; none while a client-executed tool search waits for the client. Before the
    calls, a sentence of commentary where the instructions or an earlier turn narrate."""
    visible, incomplete, context = said.text, said.incomplete, read.context
    answers: tuple[AnswerPart, ...] = ()
    namespaces = _namespaces(body.tools) | {str(f.get("name")): str(f.get("name")) for f in _added_tools(body.input)}
    if read.hosted.ends_turn:  # a client-executed tool search: the client answers it before the model goes on
        pass
    elif said.reply.calls:
        answers = tuple(
            AnswerPart(
                id=state.ids.prefixed("fc"),
                text=visible.piece_text(start, end),
                complete=end - start == len(call.arguments),
                name=call.tool.name,
                call_id=f"call_{state.ids.token(24)}",
                namespace=namespaces.get(call.tool.name),
            )
            for call, start, end in said.calls()
        )
    elif not incomplete or len(visible) > 0:
        # The text is read only when a search gave pages to cite: reading it makes every token at once.
        cited = tuple(citations_for(visible.text, read.hosted.citations)) if read.hosted.citations else ()
        top = (body.top_logprobs or 0) if logprobs.INCLUDE in (body.include or []) else None
        answers = (AnswerPart(state.ids.prefixed("msg"), visible, not incomplete, annotations=cited, top_logprobs=top),)
    if (
        answers
        and answers[0].name is not None
        and (narrates([body.instructions or "", *system_texts(context)]) or _narrated_before(context))
    ):
        said_first = Text(tuple(tokens.split(commentary([a.name or "" for a in answers]))))
        answers = (AnswerPart(state.ids.prefixed("msg"), said_first, True, phase="commentary"), *answers)
    return answers


def _namespaces(tools: Sequence[Any] | None) -> dict[str, str]:
    """The namespace of each function its calls name: a function in a ``namespace`` tool, that
    namespace; a function a tool search loads (``defer_loading``), a namespace of its own name, where
    the live API puts it."""
    spaces: dict[str, str] = {}
    for t in tools or ():
        name = t.get("name")
        if not isinstance(name, str):
            continue
        if t.get("type") == "function" and t.get("defer_loading"):
            spaces[name] = name
        elif t.get("type") == "namespace":
            spaces.update((inner["name"], name) for inner in _inner_functions(t) if isinstance(inner.get("name"), str))
    return spaces


def _added(raw_input: Any) -> list[FunctionSpec]:
    """The function tools ``additional_tools`` input items add to the conversation, callable from then on."""
    if not isinstance(raw_input, list):
        return []
    return [
        function_spec(inner, f"input[{i}].tools[{j}]")
        for i, item in enumerate(raw_input)
        if isinstance(item, Mapping) and item.get("type") == "additional_tools"
        for j, inner in enumerate(_inner_functions(item))
    ]


_CALL_KINDS = frozenset({"function_call", "custom_tool_call", "tool_search_call"})


def _narrated_before(context: Sequence[tuple[str, str]]) -> bool:
    """Whether an earlier turn of the conversation said a word before its tool calls (an assistant
    message right before a call, reasoning aside): the live model keeps doing so."""
    said = [kind for kind, _ in context if kind != "reasoning"]
    return any(a == "assistant" and b in _CALL_KINDS for a, b in itertools.pairwise(said))


def _added_tools(raw_input: Any) -> list[Mapping[str, Any]]:
    """The function tools ``additional_tools`` input items list, as sent."""
    if not isinstance(raw_input, list):
        return []
    return [
        inner
        for item in raw_input
        if isinstance(item, Mapping) and item.get("type") == "additional_tools"
        for inner in _inner_functions(item)
    ]


def _inner_functions(holder: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The function tools a namespace tool or an ``additional_tools`` item lists."""
    inner = holder.get("tools")
    return (
        [t for t in inner if isinstance(t, Mapping) and t.get("type") == "function"] if isinstance(inner, list) else []
    )


def _namespaced(tools: Sequence[Any] | None) -> list[FunctionSpec]:
    """The function tools inside ``namespace`` tools, which the model calls as it calls any other."""
    return [
        function_spec(inner, f"tools[{i}].tools[{j}]")
        for i, t in enumerate(tools or ())
        if isinstance(t, Mapping) and t.get("type") == "namespace"
        for j, inner in enumerate(_inner_functions(t))
    ]


def _choice_after(hosted: Hosted, tool_choice: str | Mapping[str, Any] | None) -> str | Mapping[str, Any] | None:
    """The ``tool_choice`` the answer after the hosted calls follows: a hosted call that does the work (an
    image generated, a web search made; not a tool search, which only loads functions) meets ``required``,
    and the live model then answers as under ``auto``; every other choice stands as sent."""
    worked = any(not str(call.done.get("type", "")).startswith("tool_search") for call in hosted.calls)
    return "auto" if worked and tool_choice == "required" else tool_choice


def _loaded_by_search(
    sent_input: Any, context: Sequence[ConversationItem], tools: Sequence[Mapping[str, Any]] | None
) -> frozenset[str]:
    """The deferred functions a tool search has loaded, by name: those the ``tool_search_output`` items of
    the input list; when the output came from a stored earlier turn instead, every deferred function."""
    outputs = [
        item.get("tools")
        for item in (sent_input if isinstance(sent_input, list) else ())
        if isinstance(item, Mapping) and item.get("type") == "tool_search_output"
    ]
    named = {
        str(t["name"])
        for listed in outputs
        if isinstance(listed, list)
        for t in listed
        if isinstance(t, Mapping) and isinstance(t.get("name"), str)
    }
    if named or not any(kind == "tool_search_output" for kind, _ in context):
        return frozenset(named)
    return frozenset(str(t.get("name")) for t in tools or () if t.get("defer_loading"))


async def earlier_turn(state: ServerState, project: str, previous_response_id: str | None) -> StoredResponse | None:
    """The stored response ``previous_response_id`` names, if it is there (one read of the store, made
    before planning); a missing one is refused by :func:`read_context`, in its place among the checks."""
    if previous_response_id is None:
        return None
    return await state.responses.find(project, previous_response_id)


def count_input_tokens(
    instructions: str | None, context: Sequence[ConversationItem], tools: Sequence[Any] | None
) -> int:
    """Input tokens, as ``usage.input_tokens`` and ``POST /v1/responses/input_tokens`` report them."""
    return tokens.count_messages(prompt_messages(instructions, context)) + tool_definition_tokens(tools)


async def remember(state: ServerState, plan: ResponsePlan, exchange: Exchange) -> None:
    """Keep the response for ``GET``, ``DELETE`` and ``previous_response_id``, unless ``store`` is false.
    Its input is listed as items (their ids drawn) here, with the event loop's turns through a long one.

    It is kept with its record deferred (:class:`~mockserver.state.responses.DeferredRecord`): its
    bodies and conversation, which read every token of its output, are made when it is first read,
    or once the request is over (``exchange.releases``), not before its first token."""
    if plan.store:
        items = await input_items.input_items_in_turns(plan.sent_input, state.ids.prefixed)
        await state.responses.put(deferred_record(plan, items))
        exchange.releases.append(partial(state.responses.settle, plan.id))


def _output_items(reasoning_part: ReasoningPart | None, answers: Sequence[AnswerPart]) -> Sequence[ConversationItem]:
    """What the next turn sees of this one. Hidden reasoning is dropped, as the live API drops it."""
    items: list[ConversationItem] = []
    if reasoning_part is not None and reasoning_part.summary:
        items.append(("reasoning", reasoning_part.summary.text))
    for answer in answers:
        if answer.name is not None:
            items.append(("function_call", answer.name + answer.text.text))
        else:
            items.append(("assistant", answer.text.text))
    return items


# -- Rendering ----------------------------------------------------------------------------------


def response_object(
    plan: ResponsePlan, *, final: bool = True, status: str = "in_progress", streamed: bool = False
) -> dict[str, Any]:
    """The ``Response`` object: final (completed or incomplete), or as it looks while ``status``.
    A ``streamed`` one (in a stream's lifecycle events) has no ``billing``, as live; ``tool_usage`` counts
    what the hosted tools used once the response is final."""
    status = plan.status if final else status
    body = {
        "id": plan.id,
        "object": "response",
        "created_at": plan.created_at,
        "status": status,
        "completed_at": plan.created_at + round(plan.duration) if final and not plan.incomplete else None,
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if final and plan.incomplete else None,
        **plan.echo,
        "output": plan.output() if final else [],
        "usage": plan.usage() if final else None,
    }
    if not streamed:
        body["billing"] = BILLING
    body["tool_usage"] = echo.tool_usage(plan.web_searches, plan.image_tokens) if final else echo.tool_usage()
    if final and plan.moderation is not None:
        body["moderation"] = plan.moderation
    return body


def deferred_record(plan: ResponsePlan, items: Sequence[dict[str, Any]]) -> DeferredRecord:
    """The response of ``plan`` to store, with its input ``items``: its bodies and conversation are
    made by :func:`finished` when the store needs them."""
    return DeferredRecord(
        id=plan.id,
        project=plan.project,
        ready_at=plan.schedule.end,
        started_at=plan.schedule.first_token_at,
        background=plan.background,
        input_items=orjson.dumps(items),
        finish=partial(finished, plan),
    )


def finished(plan: ResponsePlan) -> tuple[dict[str, Any], dict[str, Any], tuple[ConversationItem, ...]]:
    """The stored response's final body, its body while in progress, and its conversation."""
    return response_object(plan), response_object(plan, final=False), plan.conversation


def first_reply(plan: ResponsePlan, *, stream: bool) -> tuple[Schedule, Callable[[], dict[str, Any]]]:
    """When the reply to ``POST /v1/responses`` is due, and its body.

    A non-streaming ``background`` response is answered at once, ``queued``; the client polls
    ``GET`` for the rest. Otherwise the reply waits for the schedule (or streams on it).
    """
    if plan.background and not stream:
        start = plan.schedule.start
        return Schedule(start=start, ttft=0, interval=0, total_tokens=0), partial(
            response_object, plan, final=False, status="queued"
        )
    return plan.schedule, partial(response_object, plan)
