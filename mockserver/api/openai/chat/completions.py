"""Chat Completions: a request's facts for the planner, and its plan as a completion or a paced stream.

A :class:`ChatPlan` fixes everything up front: the text of each choice, the
finish reasons, the usage and the token schedule (:func:`mockserver.replies.planner.plan` decides
what is said and when). Rendering only reads it, so a stream and a non-streaming reply of the same
request carry the same content.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

import orjson

from mockserver import errors
from mockserver.api.openai import obfuscation
from mockserver.api.openai.chat import checks
from mockserver.api.openai.schemas import ChatCompletionRequest, ChatMessage
from mockserver.api.reply_sources import reply_sources
from mockserver.config.fixture import Fixture
from mockserver.config.hosted_tools import SearchResult
from mockserver.engine import conversation, generation, structured, tokens
from mockserver.engine.generation import Text
from mockserver.engine.pacing import RUN_CHUNKS, Pacer, Schedule
from mockserver.engine.streaming import DONE, Item, Run, data_event
from mockserver.engine.structured import FunctionSpec
from mockserver.errors import describe
from mockserver.replies.hosted_tools import citations_for, web_search_pages
from mockserver.replies.inline_moderation import moderation_of
from mockserver.replies.planner import Facts, Said, ends_asking, plan
from mockserver.server_state import ServerState
from mockserver.service import output_limits
from mockserver.service.access import Admission
from mockserver.service.exchange import Exchange, Usage
from mockserver.service.prompt_cache import NO_CACHE, CacheUse
from mockserver.service.reasoning import reasoning_tokens_for


@dataclass(slots=True)
class ChatCall:
    """One entry of a choice's ``tool_calls``: its arguments are ``text`` tokens ``start`` to ``end``."""

    name: str
    id: str
    start: int
    end: int

    def entry(self, index: int, arguments: str) -> dict[str, Any]:
        return {
            "index": index,
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": arguments},
        }


@dataclass(slots=True)
class ChatChoice:
    index: int
    text: Text  # the message content, or every tool call's arguments one after another when ``calls`` is set
    finish_reason: str
    reasoning_tokens: int = 0  # reasoning produced before the text, after any cut by the output limit
    calls: tuple[ChatCall, ...] = ()
    legacy: bool = False  # the request listed ``functions``: the call is the message's ``function_call``
    annotations: tuple[dict[str, Any], ...] = ()  # url_citation annotations of a web-searched answer

    def tool_call_deltas(self, lo: int, hi: int) -> list[dict[str, Any]]:
        """The ``tool_calls`` delta entries for tokens ``lo`` to ``hi``: one per call they touch. A call's
        id, type and name go in its first fragment only, as the SDK accumulators concatenate strings."""
        entries = []
        for k, call in enumerate(self.calls):
            a, b = max(lo, call.start), min(hi, call.end)
            if a >= b:
                continue
            piece = self.text.piece(a, b)
            if a == call.start:
                entries.append(call.entry(k, piece))
            elif piece:  # a token that is only part of a character carries no text
                entries.append({"index": k, "function": {"arguments": piece}})
        return entries


@dataclass(slots=True)
class ChatPlan:
    """A request's reply, fixed before its first token. Made for every request and only read once made
    (:meth:`shifted` makes another): not frozen, as a frozen dataclass sets each field through
    ``object.__setattr__``, several times the cost to make."""

    id: str
    created: int
    model: str
    service_tier: str
    system_fingerprint: str
    prompt_tokens: int
    choices: tuple[ChatChoice, ...]
    include_usage: bool
    schedule: Schedule
    cache: CacheUse = NO_CACHE
    obfuscate: bool = True  # every streamed chunk carries ``obfuscation`` (stream_options.include_obfuscation)
    moderation: dict[str, Any] | None = None  # what the requested moderation model says of the prompt and answer
    # The token counts of the choices, summed once when the plan is made: the usage, the stream and
    # the exchange each read them.
    reasoning_steps: int = field(init=False)  # token steps of reasoning before any text; choices think side by side
    text_steps: int = field(init=False)  # token steps of visible text; choices advance side by side
    reasoning_tokens: int = field(init=False)
    completion_tokens: int = field(init=False)  # the text and the reasoning of every choice

    def __post_init__(self) -> None:
        if len(self.choices) == 1:  # the usual plan: its one choice's counts, without lists
            only = self.choices[0]
            self.reasoning_steps = self.reasoning_tokens = only.reasoning_tokens
            self.text_steps = len(only.text)
            self.completion_tokens = self.text_steps + self.reasoning_tokens
            return
        reasoning = [c.reasoning_tokens for c in self.choices]
        text = [len(c.text) for c in self.choices]
        self.reasoning_steps, self.text_steps = max(reasoning, default=0), max(text, default=0)
        self.reasoning_tokens = sum(reasoning)
        self.completion_tokens = sum(text) + self.reasoning_tokens

    def shifted(self, seconds: float) -> ChatPlan:
        """This plan with its schedule ``seconds`` later (a wait for a capacity slot is part of the TTFT)."""
        return replace(self, schedule=self.schedule.shifted(seconds))

    def exchange_usage(self) -> Usage:
        cache = self.cache
        return Usage(
            self.prompt_tokens, self.completion_tokens, self.reasoning_tokens, cache.cached_tokens, cache.written_tokens
        )

    def usage(self) -> dict[str, Any]:
        prompt_details = {"cached_tokens": self.cache.cached_tokens, "audio_tokens": 0}
        if self.cache.written_tokens:
            prompt_details["cache_write_tokens"] = self.cache.written_tokens
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "prompt_tokens_details": prompt_details,
            "completion_tokens_details": {
                "reasoning_tokens": self.reasoning_tokens,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        }


def reported_tier(fixture: Fixture, tier: str) -> str:
    """The ``service_tier`` a Chat Completion may show (see ``Policies.chat_ultrafast_service_tier``)."""
    if tier == "ultrafast":
        return fixture.policies.chat_ultrafast_service_tier
    return tier


def role_and_text(message: ChatMessage) -> tuple[str, str]:
    """A message as the plan reads it: its role and :func:`message_text`."""
    content = message.content
    if isinstance(content, str) and not message.tool_calls:  # most messages: their text, as message_text finds it
        return message.role, content
    return message.role, message_text(message)


def plan_chat_completion(
    state: ServerState,
    admission: Admission,
    body: ChatCompletionRequest,
    raw_body: Any,
    exchange: Exchange | None = None,
    items: Sequence[tuple[str, str]] | None = None,
) -> ChatPlan:
    """The reply to ``body``. ``items`` are its messages as :func:`role_and_text` reads them (read here
    when not given); the prompt's tokens are the ones the context window counted (``exchange.prompt_tokens``)
    when the exchange has them."""
    fixture = state.fixture
    if items is None:
        items = [role_and_text(m) for m in body.messages]
    legacy = bool(body.functions) and not body.tools
    facts = chat_facts(state, admission, body, raw_body, exchange, items, legacy=legacy)
    planned = plan(facts)
    latest = facts.cues.latest
    # web_search_options: the answer cites the pages a search found (the fixture's, else made up).
    options = body.web_search_options
    pages = () if options is None else web_search_pages(options, fixture.hosted_tools, latest)
    choices = _choices(state, planned.choices, pages, legacy=legacy)  # their call ids drawn before the plan's id
    return ChatPlan(
        id=state.ids.chat_completion(),
        created=int(state.wall_clock()),
        model=admission.model.id,
        service_tier=reported_tier(fixture, admission.tier.tier),
        system_fingerprint=state.system_fingerprint,
        prompt_tokens=exchange.prompt_tokens
        if exchange is not None and exchange.prompt_tokens is not None
        else prompt_tokens(body, items),
        choices=choices,
        include_usage=bool(body.stream_options and body.stream_options.include_usage),
        schedule=planned.schedule,
        cache=admission.cache,
        obfuscate=obfuscation.wanted(body.stream_options),
        moderation=None
        if body.moderation is None
        else moderation_of(body.moderation, fixture.moderation.rules, latest, planned.said.text, listed=True),
    )


def chat_facts(
    state: ServerState,
    admission: Admission,
    body: ChatCompletionRequest,
    raw_body: Any,
    exchange: Exchange | None,
    items: Sequence[tuple[str, str]],
    *,
    legacy: bool,
) -> Facts:
    """The request as the planner reads it, once its limits, tools and format are checked. ``legacy``:
    it lists the deprecated ``functions``, and no ``tools``."""
    fixture = state.fixture
    checks.check_request(body)
    limit = body.output_limit
    if limit is not None:  # each limit set is checked (neither, in most requests)
        for param in ("max_completion_tokens", "max_tokens"):
            output_limits.check_limit(admission, param, getattr(body, param))
    planned_reasoning = reasoning_tokens_for(fixture, admission, body.reasoning_effort)
    output_limits.check_choices(
        fixture,
        admission,
        choices=body.n or 1,
        reasoning=planned_reasoning,
        limit=limit,
        limit_param="max_tokens" if body.max_completion_tokens is None and body.max_tokens else "max_completion_tokens",
    )
    texts = tuple([text for _, text in items])  # a tuple, as the cues keep it: not copied again
    tools = legacy_functions(body.functions) if legacy else function_tools(body.tools) if body.tools else []
    tool_choice = legacy_choice(body.function_call) if legacy else body.tool_choice
    if tool_choice is not None:  # none (most requests): nothing to check
        structured.check_tool_choice(tools, tool_choice)
    cues = generation.cues_of(
        _user_said(body.messages, items),
        texts,
        system=conversation.system_texts(items),
        results=() if ends_asking(items) else conversation.tool_results(items),
    )
    return Facts(
        reply_sources(state),
        admission,
        exchange,
        generation.request_seed(raw_body, state.settings.seed, body.seed),
        cues,
        items,
        tools,
        tool_choice,
        # None for text (most requests), as the planner reads it
        output_format=None if body.response_format is None else response_format(body.response_format, texts),
        schema_param="response_format.json_schema.schema",
        parallel=body.parallel_tool_calls is not False and not legacy,
        choices=body.n or 1,
        reasoning=planned_reasoning,
        output_limit=limit,
        stop=body.stop_sequences,
        scripts_strict=fixture.scripts_strict,
    )


def _user_said(messages: Sequence[ChatMessage], items: Sequence[tuple[str, str]]) -> list[str]:
    """The user messages' texts as :func:`~mockserver.engine.generation.cues_of` reads them: it reads
    only the latest that says something (not blank), so only that one is found, looking from the end
    (the last message, in most requests): ``[it]``; ``[""]`` when every user message is blank; ``[]``
    when there is none. A message's text is its :func:`role_and_text` one unless it carries tool calls
    (a user message seldom does): then its content's alone."""
    asked, index = False, len(items)
    for role, text in reversed(items):
        index -= 1
        if role == "user":
            message = messages[index]
            if message.tool_calls:
                text = message.text()
            if text and not text.isspace():  # what text.strip() finds non-empty, without a copy
                return [text]
            asked = True
    return [""] if asked else []


def _choices(
    state: ServerState, said: Sequence[Said], pages: Sequence[SearchResult], *, legacy: bool
) -> tuple[ChatChoice, ...]:
    """Each choice as the planner said it: its text or tool calls, why it finished, what it cites."""
    choices = []
    for index, choice in enumerate(said):
        if choice.reply.calls:
            called = "function_call" if legacy else "tool_calls"
            finish = "length" if choice.incomplete else called
            calls = tuple(
                ChatCall(call.tool.name, f"call_{state.ids.token(24)}", start, end)
                for call, start, end in choice.calls()
            )
        else:  # text (most replies): no calls to look for
            finish, calls = ("length" if choice.incomplete else "stop"), ()
        cited = _cited(choice.text.text, pages) if pages and not calls else ()
        choices.append(ChatChoice(index, choice.text, finish, choice.reasoning, calls, legacy, cited))
    return tuple(choices)


def prompt_tokens(body: ChatCompletionRequest, items: Sequence[tuple[str, str]]) -> int:
    """The prompt's tokens, counted from its messages as :func:`role_and_text` reads them."""
    messages = (tokens.PromptMessage(role, text, m.name) for m, (role, text) in zip(body.messages, items, strict=True))
    return tokens.count_messages(messages) + conversation.tool_definition_tokens(body.tools)


def completion_body(plan: ChatPlan) -> dict[str, Any]:
    """The non-streaming ``ChatCompletion`` object."""
    return {
        "id": plan.id,
        "object": "chat.completion",
        "created": plan.created,
        "model": plan.model,
        "choices": [
            {
                "index": c.index,
                "message": _message(c),
                "logprobs": None,
                "finish_reason": c.finish_reason,
            }
            for c in plan.choices
        ],
        "usage": plan.usage(),
        "service_tier": plan.service_tier,
        "system_fingerprint": plan.system_fingerprint,
        **({"moderation": plan.moderation} if plan.moderation is not None else {}),
    }


def stream_chunks(plan: ChatPlan, pacer: Pacer, *, per_chunk: int) -> Iterator[Item]:
    """The ``ChatCompletionChunk`` events of a paced stream, ending with ``[DONE]``, each after its deadline.

    Each frame is encoded before its deadline is yielded, so it is ready when it falls due; except the
    first deadline, which comes before anything is encoded. The scheduler pulls a stream as it opens, while
    the other requests of a burst wait for their heads: a stream whose first token is not due yet has its
    opening frames made when they fall due (its first token goes out in that tick, at its deadline as
    ever), and one whose first token is due at once has them made then, as before.
    """
    first = plan.reasoning_steps
    yield pacer.token_due(first)
    envelope = _envelope(plan)
    frames = _Frames(envelope, plan)
    head, tail, chunk, choice = frames.head, frames.tail, frames.chunk, _choice
    openings = []
    for c in plan.choices:
        if not c.calls:
            openings.append(head + _text_opening(c.index) + tail())
            continue
        # id, type and name go in the first fragment only: the SDK accumulators concatenate strings.
        first_call: dict[str, Any] = (
            {"function_call": {"name": c.calls[0].name, "arguments": ""}}
            if c.legacy
            else {"tool_calls": [c.calls[0].entry(0, "")]}
        )
        opening = {"role": "assistant", "content": None, "refusal": None, **first_call}
        openings.append(chunk([choice(c.index, opening)]))
    yield from openings
    # Text deltas are the per-token hot path: their bytes around the text are encoded once.
    # Loops rather than comprehensions in this generator: a name a comprehension reads becomes a cell,
    # and a stream keeps its generator, with those cells, for its whole life (more objects per open
    # stream for the garbage collector's passes to walk).
    content_frames: dict[int, tuple[bytes, bytes]] = {}
    for c in plan.choices:
        around, after = _content_around(c.index)
        content_frames[c.index] = head + around, after
    if len(plan.choices) == 1 and not plan.choices[0].calls:
        # The usual reply, one choice of text: the same frames as below, without the per-choice loop.
        (before, after), text, dumps = content_frames[plan.choices[0].index], plan.choices[0].text, orjson.dumps
        closings = _closings(after, plan.include_usage, plan.obfuscate)
        stop = first + plan.text_steps
        # The first chunk on its own (what the first-token metrics look for), the rest in runs
        # when the schedule is fixed; chunk by chunk otherwise (a fault can move it, or time scale 0).
        alone = stop if not pacer.fixed or pacer.schedule.interval == 0 else min(stop, first + per_chunk)
        for lo, hi, due in pacer.chunks(first, alone, per_chunk):
            piece = text.piece(lo - first, hi - first)
            if piece:  # a token that is only part of a character's bytes sends nothing (engine.tokens)
                frame = before + dumps(piece) + after + tail()
                yield due
                yield frame
        if alone < stop:  # the next deadline first, so the first run is made after the first token is out
            yield pacer.token_due(min(alone + per_chunk, stop) - 1)
        for lo, hi, dues in pacer.runs(alone, stop, per_chunk):
            pieces = text.pieces(lo - first, hi - first, per_chunk)
            if "" in pieces:  # tokens that are only part of a character send nothing
                dues = [due for due, piece in zip(dues, pieces, strict=True) if piece]
                pieces = [piece for piece in pieces if piece]
            yield Run(dues, frames.run(pieces, before, closings))
    else:
        yield from _choice_deltas(plan, pacer, first, per_chunk, content_frames, chunk, choice, tail)
    # A cited answer's annotations come in a delta of their own, after its text.
    closing: list[bytes] = []
    for c in plan.choices:
        if c.annotations:
            closing.append(chunk([choice(c.index, {"annotations": list(c.annotations)})]))
    for c in plan.choices:
        closing.append(chunk([choice(c.index, {}, c.finish_reason)]))
    if plan.moderation is not None:  # after the answer, in a chunk of its own
        closing.append(data_event({**envelope, "choices": [], "moderation": plan.moderation}))
    if plan.include_usage:
        padded = {"obfuscation": next(obfuscation.pads())} if plan.obfuscate else {}
        closing.append(data_event({**envelope, "choices": [], "usage": plan.usage(), **padded}))
    yield pacer.end
    yield from closing
    yield DONE


class _Frames:
    """The bytes every chunk of one stream shares: the envelope before its choices, maybe
    ``"usage":null`` and the ``obfuscation`` pad after them (orjson's output of the whole object,
    spliced). One slotted object rather than closures: a stream keeps it for its whole life, and the
    closures and their cells were some ten objects per open stream for the collector's passes.

    The pads go round :data:`~mockserver.api.openai.obfuscation.MEMBERS` event after event: ``at``
    counts the events framed, and each event's end (``"usage":null``, its pad, the closing brace) is
    one of :func:`_ends`, made once per process."""

    __slots__ = ("at", "ends", "head")

    def __init__(self, envelope: dict[str, Any], plan: ChatPlan) -> None:
        self.head = b"data: " + orjson.dumps(envelope)[:-1] + b',"choices":'
        self.ends = _ends(plan.include_usage, plan.obfuscate)
        self.at = 0

    def tail(self) -> bytes:
        ends, at = self.ends, self.at
        self.at = at + 1
        return ends[at % len(ends)]

    def chunk(self, choices: list[dict[str, Any]]) -> bytes:
        return self.head + orjson.dumps(choices) + self.tail()

    def run(self, pieces: Sequence[str], before: bytes, closings: tuple[bytes, ...]) -> list[bytes]:
        """The frames of a run of text deltas, each piece between ``before`` and its closing: the
        bytes after the text and the next event's end (``closings``, from :func:`_closings`)."""
        dumps, count, at = orjson.dumps, len(self.ends), self.at % len(self.ends)
        self.at += len(pieces)
        end = at + len(pieces)
        if end <= len(closings):  # the run's closings in one slice (the usual run)
            return [before + dumps(piece) + closing for piece, closing in zip(pieces, closings[at:end], strict=True)]
        return [before + dumps(piece) + closings[(at + j) % count] for j, piece in enumerate(pieces)]


@lru_cache(maxsize=4)
def _ends(include_usage: bool, obfuscate: bool) -> tuple[bytes, ...]:
    """What ends a stream's events after their ``choices``, in the order its pads come round (one,
    the same every time, without pads)."""
    usage_null = b',"usage":null' if include_usage else b""
    if not obfuscate:
        return (usage_null + b"}\n\n",)
    return tuple(usage_null + member + b"}\n\n" for member in obfuscation.MEMBERS)


@lru_cache(maxsize=16)
def _closings(after: bytes, include_usage: bool, obfuscate: bool) -> tuple[bytes, ...]:
    """What follows the text of a text delta: ``after``, then each of :func:`_ends` in turn, round
    and round for :data:`~mockserver.engine.pacing.RUN_CHUNKS` events past any of them, so that a
    run of frames takes its closings in one slice."""
    ends = _ends(include_usage, obfuscate)
    rounds = -(-(RUN_CHUNKS + len(ends)) // len(ends))
    return tuple(after + end for end in ends) * rounds


def _choice(index: int, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    return {"index": index, "delta": delta, "logprobs": None, "finish_reason": finish_reason}


def _choice_deltas(
    plan: ChatPlan,
    pacer: Pacer,
    first: int,
    per_chunk: int,
    content_frames: dict[int, tuple[bytes, bytes]],
    chunk: Callable[[list[dict[str, Any]]], bytes],
    choice: Callable[..., dict[str, Any]],
    tail: Callable[[], bytes],
) -> Iterator[Item]:
    """The deltas of several choices side by side, or of a tool call's arguments."""
    for lo, hi, due in pacer.chunks(first, first + plan.text_steps, per_chunk):
        frames = []
        for c in plan.choices:
            if c.calls:
                # A later call's first fragment carries its id and name; the first call's came in the opening.
                for entry in c.tool_call_deltas(lo - first, hi - first):
                    if entry["index"] == 0 and "id" in entry:
                        entry = {"index": 0, "function": {"arguments": entry["function"]["arguments"]}}
                    delta = {"function_call": entry["function"]} if c.legacy else {"tool_calls": [entry]}
                    frames.append(chunk([choice(c.index, delta)]))
                continue
            piece = c.text.piece(lo - first, hi - first)
            if piece:
                before, after = content_frames[c.index]
                frames.append(before + orjson.dumps(piece) + after + tail())
        yield due
        yield from frames


def _message(c: ChatChoice) -> dict[str, Any]:
    if not c.calls:
        return {"role": "assistant", "content": c.text.text, "refusal": None, "annotations": list(c.annotations)}
    if c.legacy:
        [call] = c.calls
        function_call = {"name": call.name, "arguments": c.text.piece(call.start, call.end)}
        return {
            "role": "assistant",
            "content": None,
            "refusal": None,
            "annotations": [],
            "function_call": function_call,
        }
    calls = []
    for call in c.calls:
        entry = call.entry(0, c.text.piece(call.start, call.end))
        del entry["index"]
        calls.append(entry)
    return {"role": "assistant", "content": None, "refusal": None, "annotations": [], "tool_calls": calls}


def message_text(message: ChatMessage) -> str:
    """What a message contributes to the prompt: its text, plus any tool calls it carries, read as the
    window check reads the request (:func:`mockserver.engine.conversation.chat_text`)."""
    if not message.tool_calls:  # most messages: their content's text alone, without the lists of calls
        return conversation.text_of(message.content)
    functions = [call.function for call in message.tool_calls]
    calls = [(function.name, function.arguments) for function in functions if function is not None]
    return conversation.chat_text(message.content, calls)


def function_tools(tools: list[dict[str, Any]] | None) -> list[FunctionSpec]:
    """Chat's function tools, nested under ``function``; other tool types are accepted and never called."""
    specs = []
    for i, tool in enumerate(tools or []):
        if tool.get("type", "function") != "function":
            continue
        function = tool.get("function")
        if not isinstance(function, dict):
            raise errors.missing_parameter(f"tools[{i}].function")
        specs.append(conversation.function_spec(function, f"tools[{i}].function"))
    return specs


def _cited(text: str, pages: Sequence[SearchResult]) -> tuple[dict[str, Any], ...]:
    """Chat's ``url_citation`` annotations: the Responses API's, nested under ``url_citation``."""
    return tuple(
        {"type": "url_citation", "url_citation": {k: v for k, v in a.items() if k != "type"}}
        for a in citations_for(text, pages)
    )


def legacy_functions(functions: list[dict[str, Any]] | None) -> list[FunctionSpec]:
    """The deprecated ``functions`` parameter's functions, the tools of a request that lists no ``tools``."""
    return [conversation.function_spec(f, f"functions[{i}]") for i, f in enumerate(functions or [])]


def legacy_choice(function_call: str | dict[str, Any] | None) -> str | dict[str, Any] | None:
    """The deprecated ``function_call`` parameter as a ``tool_choice``: ``auto``, ``none`` or one named function."""
    if isinstance(function_call, dict):
        return {"type": "function", "function": {"name": function_call.get("name")}}
    return function_call


def response_format(fmt: dict[str, Any] | None, texts: Sequence[str]) -> dict[str, Any]:
    """Chat's ``response_format``, flattened to the Responses ``text.format`` layout."""
    if fmt is None:
        return {"type": "text"}
    kind = fmt.get("type")
    if kind is None:
        raise errors.missing_parameter("response_format.type")
    if kind not in conversation.TEXT_FORMATS:
        raise errors.invalid_value("response_format.type", kind, conversation.TEXT_FORMATS)
    if kind == "json_object" and not any("json" in t.lower() for t in texts):
        raise errors.InvalidRequestError(
            "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.",
            param="messages",
        )
    if kind != "json_schema":
        return {"type": kind}
    inner = fmt.get("json_schema")
    if not isinstance(inner, dict):
        raise errors.missing_parameter("response_format.json_schema")
    if "name" not in inner:
        raise errors.missing_parameter("response_format.json_schema.name")
    schema = inner.get("schema", {})
    if not isinstance(schema, dict):
        raise errors.invalid_type("response_format.json_schema.schema", "an object", describe(schema))
    return {"type": "json_schema", "name": inner["name"], "schema": schema}


_SLOT = "\x00slot\x00"


@lru_cache(maxsize=128)
def _text_opening(index: int) -> bytes:
    """The ``choices`` of a text choice's first chunk: the same for every stream, encoded once per index
    (a request has at most 128 choices, ``n``'s bound in the schema)."""
    delta = {"role": "assistant", "content": "", "refusal": None}
    return orjson.dumps([{"index": index, "delta": delta, "logprobs": None, "finish_reason": None}])


@lru_cache(maxsize=128)
def _content_around(index: int) -> tuple[bytes, bytes]:
    """The ``choices`` of a text delta of choice ``index``, split where its text goes: the bytes
    before and after the text, the same for every stream, encoded once per index."""
    before, after = orjson.dumps([_choice(index, {"content": _SLOT})]).split(orjson.dumps(_SLOT))
    return before, after


def _envelope(plan: ChatPlan) -> dict[str, Any]:
    return {
        "id": plan.id,
        "object": "chat.completion.chunk",
        "created": plan.created,
        "model": plan.model,
        "system_fingerprint": plan.system_fingerprint,
        "service_tier": plan.service_tier,
    }
