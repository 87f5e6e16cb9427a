"""Which tool a forced ``tool_choice`` calls, turn after turn of an agent loop.

A forced choice (``required``, a named function, ``allowed_tools`` with ``mode: required``, and
Anthropic's ``any`` and ``tool``, which arrive here in the same layout) always gets a tool call, with
or without tool results in the conversation, as the live APIs do. In a loop the model moves on:

1. a named function is called, whatever came before;
2. on the first turn (no tool called yet), the tool the prompt names, else a seeded pick among the
   work tools (every tool but the output tools);
3. once tools have run, a work tool the prompt names that has not been called yet; else the output
   tool, which ends the agent's turn; else a tool not called yet; else any allowed tool.

An *output tool* is the one a framework declares to take the agent's final answer: pydantic-ai's
``final_result`` (and ``final_result_<Type>``), the ``structured_output`` and ``final_answer`` of
other libraries, a tool named after a schema class (``WeatherReport``: LangChain's ``ToolStrategy``,
instructor) or one whose description says it takes the final response.

Under ``auto`` the model may answer in text: when the latest user message asks it to ("without
calling it", "reply only with ..."), and after tool results unless the prompt names a tool not called
yet, which it then calls.

Every pick is derived from the one seeded draw the caller already made, so the same conversation
gets the same call, streamed or not, and the call's arguments draw the same values.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from mockserver.engine.structured.arguments import Prompt
from mockserver.engine.structured.written_calls import named_tool


class Tool(Protocol):
    """What the rule reads of a function tool (:class:`mockserver.engine.structured.FunctionSpec`)."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...


T = TypeVar("T", bound=Tool)

# The names frameworks give the tool that takes an agent's final answer.
OUTPUT_TOOL_NAMES = frozenset(
    {"final_answer", "final_output", "final_response", "structured_output", "structured_response", "respond"}
)
_OUTPUT_PREFIX = "final_result"
_CLASS_NAME = re.compile(r"[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+|[A-Z][a-z0-9]{2,}")
_FINAL_WORDS = ("final response", "final answer", "final result", "ends this conversation", "structured output")
# The latest user message tells the model to answer without a tool: "without calling it", "do not
# call it yet", "reply only with: ready".
_DECLINED = re.compile(
    r"\b(?:without|don't|do not|never|no need to)\s+(?:call|calling|use|using|invoke|invoking)"
    r"\s+(?:it|them|any tools?|a tool|the tools?|tools)\b"
    r"|\b(?:reply|respond|answer)\s+only\s+with\b",
    re.IGNORECASE,
)
MAX_CUE_CHARS = 4_000  # the end of the latest user message read for that cue
MAX_CALL_ITEMS = 256  # the latest items read for the tools a conversation called
# Item kinds that hold a call of a function tool (Chat and Anthropic: the assistant's turn).
_CALL_KINDS = frozenset({"assistant", "function_call", "custom_tool_call"})


def is_forced(tool_choice: str | Mapping[str, Any] | None) -> bool:
    """Whether ``tool_choice`` obliges the reply to call a tool."""
    if tool_choice == "required":
        return True
    if not isinstance(tool_choice, Mapping):
        return False
    kind = tool_choice.get("type")
    if kind == "function":
        return True
    if kind == "allowed_tools":
        inner = tool_choice.get("allowed_tools")
        mode = inner.get("mode") if isinstance(inner, Mapping) else tool_choice.get("mode")
        return mode == "required"
    return False


def declines_tools(latest: str) -> bool:
    """Whether the latest user message asks for an answer without a tool call (read under ``auto``)."""
    return _DECLINED.search(latest[-MAX_CUE_CHARS:]) is not None


def is_output_tool(tool: Tool) -> bool:
    """Whether ``tool`` takes an agent's final answer (see the module's docstring)."""
    name = tool.name
    if name.startswith(_OUTPUT_PREFIX) or name.lower() in OUTPUT_TOOL_NAMES or _CLASS_NAME.fullmatch(name):
        return True
    description = tool.description.lower()
    return any(words in description for words in _FINAL_WORDS)


def called_tools(items: Sequence[tuple[str, str]], names: Collection[str]) -> set[str]:
    """The tools of ``names`` that the conversation's ``(kind, text)`` items call. A call reads as its
    tool's name followed by its JSON arguments, in every API's items. Only the latest
    :data:`MAX_CALL_ITEMS` items that can hold a call are read, so a long history costs a bounded time."""
    found: set[str] = set()
    seen = 0
    for kind, text in reversed(items):
        if kind not in _CALL_KINDS or "{" not in text:
            continue
        seen += 1
        if seen > MAX_CALL_ITEMS:
            break
        found.update(name for name in names if f"{name}{{" in text)
    return found


def forced_pick(candidates: Sequence[T], drawn: T, called: Collection[str], prompt: Prompt | None) -> T:
    """The tool a forced, unnamed choice calls among ``candidates`` (the tools it allows), given the
    tools the conversation already ``called``. ``drawn`` is the caller's seeded draw among them: every
    seeded pick here is derived from it."""
    outputs = [t for t in candidates if is_output_tool(t)]
    work = [t for t in candidates if not is_output_tool(t)]
    if not called:
        return _prompted(candidates, prompt) or _derived(work or outputs, drawn, candidates)
    fresh_work = [t for t in work if t.name not in called]
    named = _prompted(fresh_work, prompt)
    if named is not None:
        return named
    if outputs:  # one not called yet first: a retried output tool is called again only after the others
        pool = [t for t in outputs if t.name not in called] or outputs
        return _prompted(pool, prompt) or _derived(pool, drawn, candidates)
    if fresh_work:
        return _derived(fresh_work, drawn, candidates)
    return _prompted(candidates, prompt) or drawn


def named_fresh(candidates: Sequence[T], called: Collection[str], prompt: Prompt | None) -> T | None:
    """Under ``auto`` after tool results: a tool the prompt names that the conversation has not called
    yet ("get the weather, then the time"), or None: the model answers in text."""
    return _prompted([t for t in candidates if t.name not in called], prompt)


def _prompted(tools: Sequence[T], prompt: Prompt | None) -> T | None:
    """The tool of ``tools`` the prompt names, if any (:func:`.written_calls.named_tool`)."""
    if prompt is None or not tools:
        return None
    wanted = named_tool(prompt.latest, prompt.system, [t.name for t in tools])
    return next((t for t in tools if t.name == wanted), None)


def _derived(pool: Sequence[T], drawn: T, candidates: Sequence[T]) -> T:
    """A seeded pick in ``pool``: ``drawn`` itself when it is in it, else the one its place among
    ``candidates`` lands on."""
    if drawn in pool:
        return drawn
    return pool[candidates.index(drawn) % len(pool)]
