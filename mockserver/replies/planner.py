"""The one reply planner: from a request's facts to what is said and when.

Every API family (Chat Completions, the Responses API, Anthropic's Messages API) turns its
request into :class:`Facts`, calls :func:`plan`, and turns the :class:`Plan` into its own wire
shape. The plan is made once, before the first token, so a stream and a non-streaming reply of
the same request carry the same tokens:

1. the script rule that answers, if any (:func:`mockserver.harness.scripted.choose`: once per
   request, whatever the number of choices);
2. for each choice, what it says (:func:`mockserver.replies.content.write_reply`: the script's
   reply, prose, a JSON document or tool calls);
3. the stop sequence and the output limit applied to it (reasoning counts against the limit, so a
   low limit can end a choice inside it);
4. the schedule every token is due on (:meth:`mockserver.engine.pacing.Schedule.build`), from the
   admission's timing profile.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mockserver.engine import generation, structured
from mockserver.engine.conversation import ConversationItem, answered
from mockserver.engine.generation import Text
from mockserver.engine.pacing import Clock, Schedule
from mockserver.engine.structured import FunctionSpec
from mockserver.harness import scripted
from mockserver.harness.scripted import Scripted, ScriptState
from mockserver.replies.content import Call, Reply, Writer, write_reply
from mockserver.service.access import Admission
from mockserver.service.exchange import Exchange
from mockserver.service.reasoning import cut_output


@dataclass(slots=True)
class Sources:
    """What the server holds that a plan reads: how answers are written, the script rules with
    their sequences' counters, and the clock the schedule starts on (taken for every request and
    only read: not frozen for the cost of it, see :class:`Facts`)."""

    writer: Writer
    sequences: ScriptState
    clock: Clock


@dataclass(slots=True)
class Facts:
    """One request, as the planner sees it, whatever API it came through.

    Made for every request and only read: not frozen, as a frozen dataclass sets each of these
    fields through ``object.__setattr__``, which costs several microseconds on every request's path."""

    sources: Sources
    admission: Admission  # the model, tier, account and timing profile served
    exchange: Exchange | None  # the request being served: the script steps it took, the journal's note
    seed: int
    cues: generation.Cues  # the prompt's language, kind of answer and stated length
    conversation: Sequence[ConversationItem]  # (kind, text) items, for the script rules and tool history
    tools: Sequence[FunctionSpec] = ()
    tool_choice: str | Mapping[str, Any] | None = None
    output_format: Mapping[str, Any] | None = None  # the Responses text.format layout; None for text
    schema_param: str = "response_format.json_schema.schema"  # where a json_schema format came from, for its 400
    parallel: bool = False  # the request allows parallel tool calls
    choices: int = 1
    reasoning: int = 0  # reasoning tokens planned before the answer (per choice)
    output_limit: int | None = None  # the most tokens one choice may produce, reasoning included
    stop: Sequence[str] = ()  # stop sequences: a text answer ends before the first one
    whole_calls: bool = False  # a tool call that the limit would cut is left out, not cut short
    scripts_strict: bool = False  # a request that no script rule answers is a 400


@dataclass(slots=True)
class Said:
    """What one choice says: the reply as written, and what of it is produced (only read once made,
    not frozen for the cost of it: see :class:`Facts`)."""

    reply: Reply  # the whole answer: its tokens, and the calls they belong to
    text: Text  # the tokens produced: after the stop sequence and the output limit
    reasoning: int  # the reasoning tokens produced before them
    incomplete: bool  # the output limit ended the choice
    stop_sequence: str | None = None  # the stop sequence the text ended at

    @property
    def tool(self) -> FunctionSpec | None:
        return self.reply.tool

    def calls(self) -> list[tuple[Call, int, int]]:
        """The calls the produced tokens reach, each with its ``[start, end)`` in :attr:`text`."""
        return self.reply.calls_within(len(self.text))


@dataclass(slots=True)
class Plan:
    """What is said and when: every choice, and the schedule its tokens are due on (only read once
    made, not frozen for the cost of it: see :class:`Facts`)."""

    choices: tuple[Said, ...]
    schedule: Schedule
    script: Scripted | None

    @property
    def said(self) -> Said:
        """The first (usually the only) choice."""
        return self.choices[0]


def plan(facts: Facts) -> Plan:
    """Plan the reply to ``facts``: see the module's docstring for the steps."""
    sources, admission = facts.sources, facts.admission
    fixture = sources.writer.fixture
    script: Scripted | None = None
    if fixture.scripts or facts.scripts_strict:  # most fixtures have no rules: none to try
        script = scripted.choose(
            fixture.scripts,
            sources.sequences,
            admission,
            facts.conversation,
            facts.tools,
            facts.tool_choice,
            exchange=facts.exchange,
            strict=facts.scripts_strict,
        )
    # What every choice reads alike, found once.
    has_answer = not ends_asking(facts.conversation) and answered(facts.conversation)
    output_format = facts.output_format or _TEXT
    called = _called(facts, has_answer)
    if facts.choices == 1:  # the usual request: one choice, without a generator and lists for it
        only = _said(facts, 0, script, has_answer, output_format, called)
        choices: tuple[Said, ...] = (only,)
        total = only.reasoning + len(only.text)
    else:
        choices = tuple(
            _said(facts, index, script, has_answer, output_format, called) for index in range(facts.choices)
        )
        # Choices advance side by side: the longest reasoning, then the longest text.
        total = max([c.reasoning for c in choices]) + max([len(c.text) for c in choices])
    language = facts.cues.language
    profile = admission.profile
    schedule = Schedule.build(
        start=admission.start_time(sources.clock),
        ttft=profile.ttft_ms / 1000,
        tokens_per_second=profile.rate(facts.seed, language, fixture.tokens_per_character(language)),
        total_tokens=total,
        jitter=profile.jitter,
        time_scale=sources.writer.time_scale,
        rng=facts.seed,
    )
    return Plan(choices, schedule, script)


def ends_asking(conversation: Sequence[ConversationItem]) -> bool:
    """Whether the conversation ends with a user message that says something (most requests): then no
    tool result follows the last one, which :func:`mockserver.engine.conversation.answered` and
    :func:`~mockserver.engine.conversation.tool_results` look for, and they need not look."""
    if not conversation:
        return False
    kind, text = conversation[-1]
    return kind == "user" and bool(text) and not text.isspace()


def whole_reply_schedule(admission: Admission, clock: Clock, time_scale: float) -> Schedule:
    """The schedule of a reply with no tokens to pace (an embedding, a moderation): it is all due at
    the admission's time to first token."""
    profile = admission.profile
    return Schedule.build(
        start=admission.start_time(clock),
        ttft=profile.ttft_ms / 1000,
        tokens_per_second=profile.tokens_per_second,
        total_tokens=0,
        time_scale=time_scale,
    )


_TEXT: Mapping[str, Any] = {"type": "text"}  # the output format of a request that sets none


def _called(facts: Facts, has_answer: bool) -> set[str]:
    """The function tools the conversation already called, which a forced ``tool_choice`` moves on
    from, and which ``auto`` after tool results does not call again; looked for only then."""
    if not facts.tools or not (has_answer or structured.is_forced(facts.tool_choice)):
        return set()
    return structured.called_tools(facts.conversation, [t.name for t in facts.tools])


def _said(
    facts: Facts,
    index: int,
    script: Scripted | None,
    has_answer: bool,
    output_format: Mapping[str, Any],
    called: set[str],
) -> Said:
    reply = write_reply(
        facts.sources.writer,
        facts.admission,
        seed=facts.seed + index,
        cues=facts.cues,
        tools=facts.tools,
        tool_choice=facts.tool_choice,
        answered=has_answer,
        output_format=output_format,
        schema_param=facts.schema_param,
        script=script,
        parallel=facts.parallel,
        called=called,
    )
    text, stop_sequence = reply.text, None
    if reply.tool is None and any(facts.stop):
        text, stop_sequence = cut_at_stop(text, facts.stop)
    if facts.output_limit is None:  # nothing is cut (most requests): what cut_output would find
        return Said(reply, text, facts.reasoning, False, stop_sequence)
    cut = cut_output(facts.reasoning, len(text), facts.output_limit)
    visible = 0 if facts.whole_calls and reply.tool is not None and cut.incomplete else cut.visible
    return Said(reply, text.cut(visible), cut.reasoning, cut.incomplete, stop_sequence)


def cut_at_stop(text: Text, stops: Sequence[str]) -> tuple[Text, str | None]:
    """Cut before the earliest stop sequence; return the text and the sequence that matched, if any."""
    joined = text.text
    found = [(joined.find(s), s) for s in stops if s and s in joined]
    if not found:
        return text, None
    _, sequence = min(found)
    return generation.apply_stop(text, [sequence])[0], sequence
