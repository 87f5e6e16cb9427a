"""Scripted replies: which ``scripts:`` rule answers a request, and what it says.

Rules are tried in order and the first one that *applies* answers; with none,
the reply is generated as usual. A rule applies when its ``match`` holds and its
reply can be given:

- a ``tool_calls`` reply needs the function among the request's ``tools`` (and
  allowed by ``tool_choice``); otherwise the rule is passed over;
- a plain ``tool_calls`` reply is also passed over once the conversation holds a
  tool result after the latest user message, so an agent loop ends as it does with
  generated tool calls (put a text rule for the same question after it). A
  ``sequence`` is followed step by step whatever the history, for several rounds;
- a ``sequence`` gives its steps to successive matching requests, counted per
  ``x-mock-test-id`` (across every worker and replica, with a shared ``--state``);
  past its end it repeats its last step, or with ``then: generate`` stops
  applying. A request that a step cannot answer (a tool that is not offered)
  does not use the step up.

The choice is made once per request: when the reply is planned again for a
capacity downgrade, or once per choice of ``n``, a sequence does not advance again.
Counters reset with :meth:`ScriptState.clear` (``POST /_mock/reset``, a test's end).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from mockserver import errors
from mockserver.config import patterns
from mockserver.config.script_rules import ScriptError, ScriptMatch, ScriptRule, ScriptStep
from mockserver.errors.variants import ErrorContext, status_error
from mockserver.harness.journal import TEST_ID_HEADER
from mockserver.service.exchange import Exchange
from mockserver.state.counters import Counters, MemoryCounters

if TYPE_CHECKING:
    from mockserver.engine.conversation import ConversationItem
    from mockserver.engine.structured import FunctionSpec
    from mockserver.service.access import Admission

MAX_PLANNING_ROUNDS = 8  # a request that loses the race for a step this often in a row gets a retryable 503

Plan = TypeVar("Plan")


@dataclass(frozen=True)
class Scripted:
    """The rule that answers a request, and the reply it gives (one step of a sequence)."""

    index: int
    rule: ScriptRule
    step: int | None  # the sequence step, from 0; None for a plain reply
    reply: ScriptStep

    def journal(self) -> dict[str, Any]:
        return {"index": self.index, "name": self.rule.name, "step": self.step}


@dataclass(frozen=True)
class Facts:
    """What a rule's ``match`` can see of a request."""

    model: str
    tier: str
    key: str
    path: str
    message: str  # the latest user message
    turn: int  # user messages in the conversation
    answered: bool  # a tool result follows the latest user message


class Steps:
    """One request's view of its test id's sequence counters: read before its reply is planned,
    and the steps the plan took, to be claimed after it (:meth:`ScriptState.planned`)."""

    def __init__(self, used: dict[str, int] | None = None) -> None:
        self._used = used or {}
        self.claims: dict[str, int] = {}  # counter -> the value it had when this request took a step
        self.rules: list[int] = []  # the rules whose step this request took

    def peek(self, ident: str) -> int:
        return self._used.get(ident, 0)

    def take(self, index: int, ident: str) -> None:
        used = self.peek(ident)
        self.claims[ident] = used
        self._used[ident] = used + 1
        self.rules.append(index)


class ScriptState:
    """How many steps of each sequence every test id has used, in a
    :class:`~mockserver.state.counters.Counters`: this process's own, or Redis, which every worker and
    replica shares. ``clear()`` resets.

    Planning is synchronous, so a request reads its test id's counters before its reply is planned
    and claims the steps it took after (:meth:`planned`). The claim is atomic and only succeeds if
    no other request took a step of the same sequence meanwhile; otherwise the request reads again
    and is planned again. Two concurrent requests in one test therefore get successive steps, in
    the order their claims land, as in one process.
    """

    def __init__(self, counters: Counters | None = None) -> None:
        self.counters: Counters = counters if counters is not None else MemoryCounters()

    def planned_on_loop(self, rules: Sequence[ScriptRule], plan: Callable[[], Plan]) -> Plan | None:
        """``plan()`` at once, when nothing makes it wait (most requests): no sequence among ``rules``
        (no counters to read or claim) and no backtracking pattern check
        (:func:`mockserver.config.patterns.on_loop`). None otherwise: then await :meth:`planned`, with
        ``tried_on_loop`` when there was no sequence."""
        return None if _has_sequence(rules) else patterns.on_loop(plan)

    async def planned(
        self, rules: Sequence[ScriptRule], exchange: Exchange, plan: Callable[[], Plan], *, tried_on_loop: bool = False
    ) -> Plan:
        """``plan()``, with the sequence steps it takes given to this request alone. The plan raising
        (a scripted error, or a request refused after its step was chosen) still uses the step up.
        Without sequences among ``rules``, just ``plan()``: no counters are read. Either way ``plan()``
        runs through :func:`mockserver.config.patterns.off_loop`: in a thread if it must wait for a
        backtracking pattern check, so the event loop never does (``tried_on_loop``: :meth:`planned_on_loop`
        was called first, and found that it would wait when there is no sequence: straight to the thread)."""
        if not _has_sequence(rules):
            return await patterns.off_loop(plan, tried_on_loop=tried_on_loop)
        scope = exchange.headers.get(TEST_ID_HEADER)
        for _ in range(MAX_PLANNING_ROUNDS):
            steps = exchange.script_counters = Steps(await self.counters.read(scope))
            try:
                planned = await patterns.off_loop(plan)
            except errors.MockAPIError:
                if await self._claim(scope, steps, exchange):
                    raise
                continue
            if await self._claim(scope, steps, exchange):
                return planned
        raise sequence_contended()

    async def _claim(self, scope: str | None, steps: Steps, exchange: Exchange) -> bool:
        if not steps.claims or await self.counters.claim(scope, steps.claims):
            return True
        memo = exchange.script_steps or {}
        for index in steps.rules:  # another request took these steps first: choose again
            memo.pop(index, None)
        return False

    def steps(self, exchange: Exchange | None) -> Steps:
        """The counters :meth:`planned` read for this request (none read: every sequence at its start)."""
        found = exchange.script_counters if exchange is not None else None
        return found if isinstance(found, Steps) else Steps()

    async def clear(self, scope: str | None = None) -> None:
        await self.counters.clear(scope)


def _has_sequence(rules: Sequence[ScriptRule]) -> bool:
    """Whether any of ``rules`` is a sequence (none, in most fixtures: no rules at all)."""
    return bool(rules) and any(rule.reply.sequence is not None for rule in rules)


def sequence_contended() -> errors.ServiceUnavailableError:
    """So many requests of one test raced for its sequences that this one lost every round. Retryable."""
    error = errors.ServiceUnavailableError(
        f"Too many concurrent requests of this test took steps of a scripted sequence; this one lost "
        f"{MAX_PLANNING_ROUNDS} times in a row. Please retry.",
        code="script_sequence_contended",
    )
    error.headers.update({"retry-after": "0", "retry-after-ms": "10", "x-should-retry": "true"})
    return error


def choose(
    rules: Sequence[ScriptRule],
    sequences: ScriptState,
    admission: Admission,
    conversation: Sequence[ConversationItem],
    tools: Sequence[FunctionSpec],
    tool_choice: str | Mapping[str, Any] | None,
    *,
    exchange: Exchange | None = None,
    strict: bool = False,
) -> Scripted | None:
    """The scripted reply for this request, or None to generate one. Notes the rule in ``exchange``'s
    journal entry, and the sequence steps it took there (none is kept without an exchange).

    With ``strict`` (the fixture's ``scripts_strict``), a request that no rule answers is refused
    with :func:`unscripted`, a 400 that names the request and says why each rule passed it over.
    """
    if not rules and not strict:
        return None
    # Here, not at the top: the server's state holds a ScriptState from start-up, and the structured-output
    # engine loads with the first reply planned.
    from mockserver.engine import structured

    memo: dict[int, int] = {}
    if exchange is not None:
        if exchange.script_steps is None:
            exchange.script_steps = {}
        memo = exchange.script_steps
    used = sequences.steps(exchange)
    facts = facts_of(admission, exchange.path if exchange is not None else "", conversation)
    offered = structured.callable_tools(tools, tool_choice)
    chosen = None
    passed_over: list[str] = []
    for index, rule in enumerate(rules):
        label = f"#{index}" + (f" {rule.name!r}" if rule.name else "")
        mismatch = why_not(rule.match, facts)
        if mismatch is not None:
            passed_over.append(f"{label}: {mismatch}")
            continue
        steps = rule.reply.steps
        ident = f"{index}:{rule.model_dump_json()}"  # a changed rule starts its sequence afresh
        step: int | None = None
        if rule.reply.sequence is None:
            if rule.reply.tool_calls is not None and facts.answered:
                passed_over.append(f"{label}: its tool_calls are already answered by a tool result")
                continue
        else:
            step = memo[index] if index in memo else used.peek(ident)
            if step >= len(steps):
                if rule.reply.then == "generate":
                    passed_over.append(f"{label}: its sequence is used up (then: generate)")
                    continue
                step = len(steps) - 1
        reply = steps[step or 0]
        if reply.embedding is not None:
            passed_over.append(f"{label}: its reply is an embedding vector, for /v1/embeddings")
            continue
        if reply.tool_calls is not None and not all(call.name in offered for call in reply.tool_calls):
            passed_over.append(f"{label}: it calls a function the request does not offer")
            continue
        if step is not None and index not in memo:
            memo[index] = step
            used.take(index, ident)
        chosen = Scripted(index, rule, step, reply)
        break
    if exchange is not None:
        exchange.script = None if chosen is None else chosen.journal()
    if chosen is None and strict:
        raise unscripted(facts, passed_over)
    return chosen


MAX_QUOTED = 80  # characters of the latest user message quoted in the strict-mode error


def unscripted(facts: Facts, passed_over: Sequence[str]) -> errors.InvalidRequestError:
    """The 400 of strict mode: which request went unscripted, and why each rule passed it over."""
    message = facts.message if len(facts.message) <= MAX_QUOTED else facts.message[:MAX_QUOTED] + "..."
    tried = "; ".join(passed_over) if passed_over else "there are no rules"
    return errors.InvalidRequestError(
        f"No script rule matches this request and scripts_strict is on: POST {facts.path or '(unknown path)'} "
        f"model={facts.model} tier={facts.tier} turn={facts.turn} latest user message {message!r}. "
        f"Rules tried: {tried}.",
        code="unscripted_request",
    )


def facts_of(admission: Admission, path: str, conversation: Sequence[ConversationItem]) -> Facts:
    from mockserver.engine.conversation import answered

    users = [text for kind, text in conversation if kind == "user"]
    return Facts(
        model=admission.model.id,
        tier=admission.tier.tier,
        key=admission.account.key,
        path=path,
        message=users[-1] if users else "",
        turn=len(users),
        answered=answered(conversation),
    )


def matches(match: ScriptMatch, facts: Facts) -> bool:
    return why_not(match, facts) is None


def why_not(match: ScriptMatch, facts: Facts) -> str | None:
    """Why ``match`` does not hold for the request (the first field that differs), or None when it holds."""
    if match.model is not None and match.model != facts.model:
        return f"model is {match.model!r}"
    if match.tier is not None and match.tier != facts.tier:
        return f"tier is {match.tier!r}"
    if match.key is not None and match.key != facts.key:
        return "key differs"
    if match.path is not None and not facts.path.startswith(match.path):
        return f"path is {match.path!r}"
    if match.turn is not None and match.turn != facts.turn:
        return f"turn is {match.turn}"
    if match.message is not None and not patterns.search(match.message, facts.message):
        return f"message {match.message!r} does not match"
    return None


def error_for(spec: ScriptError, admission: Admission, time_scale: float) -> errors.MockAPIError:
    """The error a scripted ``error`` reply raises: the same body and headers as a ``status=`` fault."""
    account = admission.account
    where = ErrorContext(
        model=admission.model.id,
        key=account.key,
        organization=account.organization,
        project=account.project,
        tier=admission.tier.tier,
    )
    error = status_error(
        spec.status, where, code=spec.code, retry_after=spec.retry_after, retry=spec.retry, time_scale=time_scale
    )
    if spec.message is not None:
        error.message = spec.message
    return error
