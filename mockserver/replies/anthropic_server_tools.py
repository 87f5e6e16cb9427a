"""Anthropic's server tools, run as the live API runs them: before the answer, inside one Message.

A Messages request may declare server tools next to its custom ones: web search and web fetch,
code execution (bash and the text editor), tool search (regex or BM25 over the deferred tools)
and the advisor. The live API runs them itself and shows each run as a ``server_tool_use`` block
followed by its result block (``web_search_tool_result``, ``web_fetch_tool_result``,
``bash_code_execution_tool_result``, ``text_editor_code_execution_tool_result``,
``tool_search_tool_result``, ``advisor_tool_result``), then answers; web results are cited in
the answer's text blocks.

:func:`plan_turn` decides those runs, deterministically under the request's seed:

- a server tool runs at the start of a turn (the latest user message is text, not a tool result)
  unless ``tool_choice`` is ``none`` or forces a custom tool; every declared server tool runs once,
  in the order declared, except web search, which runs once per quoted query in the prompt
  (once with the prompt's words when it quotes none), up to the tool's ``max_uses``;
- a turn runs at most :data:`MAX_SERVER_CALLS` tools; a longer one pauses (``pause_turn``) with
  the next call started and no result, and continues where it stopped when the client sends the
  paused turn back;
- results are made up on reserved example domains (``example.com``, ``.org``, ``.net``);
- a script rule's ``server_tools`` give the calls and results verbatim instead.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import math
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

MAX_SERVER_CALLS = 10  # the live API's server-side loop: a turn with more pauses (pause_turn)
PROMPT_READ = 2048  # the characters of the prompt read for its words and arithmetic (a bounded scan)
MAX_QUERIES = 256  # the quoted queries of one prompt that are searched, over the turns that continue it
SEARCH_RESULTS = 3
TOOL_SEARCH_LIMIT = 5
EXAMPLE_DOMAINS = ("example.com", "example.org", "example.net")
CONTAINER_LIFETIME_S = 3600
ADVICE_TOKENS = 24  # the advisor's answer: its own output, counted in usage.iterations apart from the Message's
REDACTED_ADVISORS = ("claude-fable-5",)  # advisor models whose advice comes encrypted, as recorded live
_QUOTED = re.compile(r"[\"“]([^\"”]{2,200})[\"”]")
_URL = re.compile(r"https?://[^\s\"'<>)\]]+")
_NUMBER = r"(-?\d{1,18}(?:\.\d{1,18})?)"  # bounded, and started only where no number goes on: a linear scan
_ARITHMETIC = re.compile(rf"(?<![\d.]){_NUMBER}\s{{0,3}}([*x×+\-/])\s{{0,3}}{_NUMBER}(?!\d)")
_WORD = re.compile(r"[A-Za-z0-9]+")
_PAGE_AGES = (None, "2 days ago", "1 week ago", "3 weeks ago", None)

# The kinds of server tool, by the prefix of their ``type``; web search and fetch are counted in usage.
KINDS = (
    ("web_search_", "web_search"),
    ("web_fetch_", "web_fetch"),
    ("code_execution_", "code_execution"),
    ("tool_search_tool_regex", "tool_search_regex"),
    ("tool_search_tool_bm25", "tool_search_bm25"),
    ("advisor_", "advisor"),
)
COUNTED = {"web_search": "web_search_requests", "web_fetch": "web_fetch_requests"}


PYTHON_ONLY_CODE_EXECUTION = frozenset({"code_execution_20250522"})  # before bash and the text editor


@dataclass(frozen=True)
class ServerTool:
    """One server tool the request declares: its kind, the name it is called by, its definition."""

    kind: str
    name: str
    definition: Mapping[str, Any]


@dataclass(frozen=True)
class Deferred:
    """A custom tool declared with ``defer_loading``: the model finds it with tool search first."""

    name: str
    description: str


@dataclass(frozen=True)
class ServerCall:
    """One run: the ``server_tool_use`` block's name and input, and its result block (None: paused)."""

    id: str
    name: str
    input: dict[str, Any]
    result: dict[str, Any] | None
    counted: str | None = None  # the usage.server_tool_use counter it adds to


@dataclass(frozen=True)
class Source:
    """A web page the answer may cite."""

    url: str
    title: str
    text: str


@dataclass
class ServerTurn:
    """The server tool runs of one Message, before its answer."""

    calls: list[ServerCall] = field(default_factory=list)
    paused: bool = False
    sources: list[Source] = field(default_factory=list)  # what the answer cites (web search results)
    found: list[str] = field(default_factory=list)  # custom tools tool search made available
    container: dict[str, Any] | None = None  # code execution's container
    advisor: ServerTool | None = None  # the advisor consulted, for usage.iterations

    def requests(self, counter: str) -> int:
        """The runs that add to ``usage.server_tool_use.<counter>`` (``web_search_requests``)."""
        return sum(1 for c in self.calls if c.counted == counter and c.result is not None)


@dataclass(frozen=True)
class TurnSoFar:
    """The server tool runs the current turn already holds (a paused turn sent back): how many ran,
    and the one started without a result, which runs first."""

    done: int = 0
    dangling: tuple[str, str, dict[str, Any]] | None = None  # (id, name, input)


@dataclass(frozen=True)
class Context:
    """What the runs read besides the tools: the prompt, the seed, the time, fresh ids and prose."""

    prompt: str
    seed: int
    now: float
    new_id: Callable[[str], str]  # a fresh id with the given prefix
    prose: Callable[[int, int], str]  # (seed, tokens) -> prose
    container: str | None = None  # the request's container id, reused


def classify(tools: Sequence[Mapping[str, Any]] | None) -> tuple[list[ServerTool], list[Deferred]]:
    """The server tools among ``tools``, and the custom tools declared with ``defer_loading``."""
    server, deferred = [], []
    for tool in tools or []:
        kind = kind_of(tool.get("type"))
        if kind is not None:
            server.append(ServerTool(kind, str(tool.get("name") or kind), tool))
        elif tool.get("defer_loading") is True:
            deferred.append(Deferred(str(tool.get("name")), str(tool.get("description") or "")))
    return server, deferred


def kind_of(tool_type: Any) -> str | None:
    """The server tool kind a tool ``type`` names, or None for a custom tool."""
    if not isinstance(tool_type, str):
        return None
    return next((kind for prefix, kind in KINDS if tool_type.startswith(prefix)), None)


def plan_turn(
    tools: Sequence[ServerTool],
    deferred: Sequence[Deferred],
    context: Context,
    so_far: TurnSoFar,
    *,
    only: str | None = None,
    scripted: Sequence[Mapping[str, Any]] | None = None,
) -> ServerTurn:
    """The runs of this Message: ``only`` names the one server tool a ``tool_choice`` forces."""
    turn = ServerTurn()
    if scripted is not None:
        return _scripted(tools, scripted, context, turn)
    wanted = [t for t in tools if only is None or t.name == only]
    planned: list[tuple[ServerTool, str, dict[str, Any]]] = []
    for tool in wanted:
        planned.extend((tool, name, payload) for name, payload in _inputs(tool, context))
    rng = random.Random(context.seed)
    for index, (tool, name, payload) in enumerate(planned):
        if index < so_far.done:
            continue
        dangling = so_far.dangling if index == so_far.done else None
        call_id = dangling[0] if dangling is not None else context.new_id("srvtoolu_01")
        if len(turn.calls) == MAX_SERVER_CALLS:  # the loop's limit: started, and paused before its result
            turn.calls.append(ServerCall(call_id, name, payload, None, COUNTED.get(tool.kind)))
            turn.paused = True
            break
        result = _result(tool, name, payload, call_id, context, rng, turn, deferred)
        turn.calls.append(ServerCall(call_id, name, payload, result, COUNTED.get(tool.kind)))
    return turn


def _inputs(tool: ServerTool, context: Context) -> list[tuple[str, dict[str, Any]]]:
    """The (server_tool_use name, input) of each run of ``tool`` this turn."""
    prompt = context.prompt
    words = _WORD.findall(prompt[:PROMPT_READ])
    if tool.kind == "web_search":
        quoted = itertools.islice(_QUOTED.finditer(prompt), MAX_QUERIES)
        queries = [q.group(1).strip() for q in quoted] or [" ".join(words[:8]) or "latest news"]
        limit = tool.definition.get("max_uses")
        if isinstance(limit, int) and limit > 0:
            queries = queries[:limit]
        return [(tool.name, {"query": q}) for q in queries]
    if tool.kind == "web_fetch":
        found = _URL.search(prompt)
        return [(tool.name, {"url": found.group(0).rstrip(".,;") if found else "https://example.com/"})]
    if tool.kind == "code_execution":
        command = _command(prompt, words)
        if tool.definition.get("type") in PYTHON_ONLY_CODE_EXECUTION:  # the older tool runs Python code only
            return [(tool.name, {"code": f"print({command[1]!r})"})]
        if re.search(r"(?i)\bfiles?\b", prompt):
            script = "/tmp/main.py"
            edit = {"command": "create", "path": script, "file_text": f"print({command[1]!r})\n"}
            if re.search(r"(?i)\b(view|show|read)\b", prompt):  # asked to look at the file: the editor shows it
                return [("text_editor_code_execution", edit), ("text_editor_code_execution", _view(script))]
            return [("text_editor_code_execution", edit), ("bash_code_execution", {"command": f"python3 {script}"})]
        return [("bash_code_execution", {"command": command[0]})]
    if tool.kind == "tool_search_regex":
        terms = [w.lower() for w in words if len(w) > 3][:4] or ["tool"]
        return [(tool.name, {"pattern": "(?i)" + "|".join(re.escape(t) for t in terms)})]
    if tool.kind == "tool_search_bm25":
        return [(tool.name, {"query": " ".join(words[:8]) or "tool"})]
    return [(tool.name, {})]  # the advisor takes no input: it reads the conversation


def _view(path: str) -> dict[str, Any]:
    return {"command": "view", "path": path}


def _viewed(turn: ServerTurn) -> dict[str, Any]:
    """A text editor ``view`` of the file this turn created: its whole text."""
    text = next((str(c.input.get("file_text", "")) for c in turn.calls if c.input.get("command") == "create"), "")
    lines = len(text.splitlines())
    return {
        "type": "text_editor_code_execution_view_result",
        "file_type": "text",
        "content": text,
        "num_lines": lines,
        "start_line": 1,
        "total_lines": lines,
    }


def _command(prompt: str, words: Sequence[str]) -> tuple[str, str]:
    """A bash command for the prompt, and what it prints: an arithmetic expression the prompt holds,
    worked out, or its first words echoed."""
    found = _ARITHMETIC.search(prompt[:PROMPT_READ])
    if found is not None:
        left, op, right = found.groups()
        op = "*" if op in "x×" else op
        value = _arithmetic(left, op, right)
        if value is not None:
            if "." in left + right or op == "/":
                return f'python3 -c "print({left} {op} {right})"', value
            return f"echo $(({left} {op} {right}))", value
    said = " ".join(words[:6]) or "done"
    return f"echo '{said}'", said


def _arithmetic(left: str, op: str, right: str) -> str | None:
    a, b = (float(left), float(right)) if "." in left + right or op == "/" else (int(left), int(right))
    if op == "/" and b == 0:
        return None
    value = {"*": a * b, "+": a + b, "-": a - b, "/": a / b if b else 0}[op]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return str(value)


def _result(
    tool: ServerTool,
    name: str,
    payload: Mapping[str, Any],
    call_id: str,
    context: Context,
    rng: random.Random,
    turn: ServerTurn,
    deferred: Sequence[Deferred],
) -> dict[str, Any]:
    """The result block of one run."""
    kind = tool.kind
    if kind == "web_search":
        results = []
        for _ in range(SEARCH_RESULTS):
            source = _page(str(payload.get("query")), len(turn.sources), context)
            turn.sources.append(source)
            results.append(
                {
                    "type": "web_search_result",
                    "title": source.title,
                    "url": source.url,
                    "encrypted_content": _opaque(source.url, source.text),
                    "page_age": rng.choice(_PAGE_AGES),
                }
            )
        return {"type": "web_search_tool_result", "tool_use_id": call_id, "content": results}
    if kind == "web_fetch":
        url = str(payload.get("url"))
        page = _page(url, len(turn.sources), context, url=url)
        turn.sources.append(page)
        fetched = {
            "type": "web_fetch_result",
            "url": url,
            "retrieved_at": datetime.fromtimestamp(context.now, UTC).isoformat(),
            "content": {
                "type": "document",
                "source": {"type": "text", "media_type": "text/plain", "data": page.text},
                "title": page.title,
            },
        }
        return {"type": "web_fetch_tool_result", "tool_use_id": call_id, "content": fetched}
    if kind == "code_execution":
        turn.container = turn.container or {
            "id": context.container or context.new_id("container_011C"),
            "expires_at": _iso(context.now + CONTAINER_LIFETIME_S),
        }
        if name not in _RESULT_BLOCK:  # the older, Python-only tool: its own result block, no files
            printed = _command(context.prompt, _WORD.findall(context.prompt[:PROMPT_READ]))[1]
            ran = {"type": "code_execution_result", "stdout": printed + "\n", "stderr": "", "return_code": 0}
            ran |= {"content": [], "abort_reason": None}
            return {"type": "code_execution_tool_result", "tool_use_id": call_id, "content": ran}
        if name == "text_editor_code_execution" and payload.get("command") == "view":
            return {"type": "text_editor_code_execution_tool_result", "tool_use_id": call_id, "content": _viewed(turn)}
        if name == "text_editor_code_execution":
            content: dict[str, Any] = {"type": "text_editor_code_execution_create_result", "is_file_update": False}
            return {"type": "text_editor_code_execution_tool_result", "tool_use_id": call_id, "content": content}
        printed = _command(context.prompt, _WORD.findall(context.prompt[:PROMPT_READ]))[1]
        content = {"type": "bash_code_execution_result", "stdout": printed + "\n", "stderr": "", "return_code": 0}
        content["content"] = []
        return {"type": "bash_code_execution_tool_result", "tool_use_id": call_id, "content": content}
    if kind in ("tool_search_bm25", "tool_search_regex"):
        found = _searched(kind, payload, deferred)
        turn.found.extend(n for n in found if n not in turn.found)
        references = [{"type": "tool_reference", "tool_name": n} for n in found]
        content = {"type": "tool_search_tool_search_result", "tool_references": references}
        return {"type": "tool_search_tool_result", "tool_use_id": call_id, "content": content}
    turn.advisor = tool
    text = context.prose(context.seed ^ 0xAD, ADVICE_TOKENS)
    if tool.definition.get("model") in REDACTED_ADVISORS:
        advice = {"type": "advisor_redacted_result", "encrypted_content": _opaque(text), "stop_reason": "end_turn"}
    else:
        advice = {"type": "advisor_result", "text": text, "stop_reason": "end_turn"}
    return {"type": "advisor_tool_result", "tool_use_id": call_id, "content": advice}


def _searched(kind: str, payload: Mapping[str, Any], deferred: Sequence[Deferred]) -> list[str]:
    """The deferred tools a search finds, best first: BM25 over their names and descriptions, or the
    regex ``pattern`` searched in them; the first deferred tool when nothing matches."""
    if not deferred:
        return []
    documents = [_WORD.findall(f"{d.name.replace('_', ' ')} {d.description}".lower()) for d in deferred]
    if kind == "tool_search_regex":
        try:
            pattern = re.compile(str(payload.get("pattern")))
        except re.error:
            return []
        hits = [d.name for d in deferred if pattern.search(f"{d.name} {d.description}")]
        return hits[:TOOL_SEARCH_LIMIT] or [deferred[0].name]
    query = _WORD.findall(str(payload.get("query")).lower())
    scores = bm25(query, documents)
    ranked = sorted((i for i, s in enumerate(scores) if s > 0), key=lambda i: -scores[i])
    return [deferred[i].name for i in ranked[:TOOL_SEARCH_LIMIT]] or [deferred[0].name]


def bm25(query: Sequence[str], documents: Sequence[Sequence[str]], k1: float = 1.2, b: float = 0.75) -> list[float]:
    """Okapi BM25 score of each document (a list of terms) for ``query``."""
    count = len(documents)
    average = sum(len(d) for d in documents) / count if count else 0.0
    scores = []
    for document in documents:
        score = 0.0
        for term in set(query):
            frequency = document.count(term)
            if not frequency:
                continue
            holding = sum(1 for d in documents if term in d)
            idf = math.log(1 + (count - holding + 0.5) / (holding + 0.5))
            norm = frequency + k1 * (1 - b + b * len(document) / (average or 1))
            score += idf * frequency * (k1 + 1) / norm
        scores.append(score)
    return scores


def _page(topic: str, index: int, context: Context, url: str | None = None) -> Source:
    """A made-up web page about ``topic`` on a reserved example domain."""
    words = _WORD.findall(topic)[:6] or ["page"]
    slug = "-".join(w.lower() for w in words)
    title = f"{' '.join(words).title()} | Example {index + 1}"
    text = context.prose(context.seed + 7919 * (index + 1), 40)
    return Source(url or f"https://{EXAMPLE_DOMAINS[index % 3]}/{slug}", title, text)


def citation(source: Source, seed: int) -> dict[str, Any]:
    """A ``web_search_result_location`` citation of ``source``, as a cited text block carries it."""
    return {
        "type": "web_search_result_location",
        "cited_text": source.text[:150],
        "url": source.url,
        "title": source.title,
        "encrypted_index": _opaque(source.url, str(seed)),
    }


def _scripted(
    tools: Sequence[ServerTool], scripted: Sequence[Mapping[str, Any]], context: Context, turn: ServerTurn
) -> ServerTurn:
    """The runs a script rule gives: each ``{name, input, result}``, the result as its block's ``content``."""
    by_name = {t.name: t for t in tools}
    for entry in scripted:
        name = str(entry.get("name"))
        tool = by_name.get(name)
        kind = tool.kind if tool is not None else ("code_execution" if name.endswith("_code_execution") else "")
        call_id = context.new_id("srvtoolu_01")
        content = entry.get("result")
        block = _RESULT_BLOCK.get(name) or _RESULT_FOR_KIND.get(kind, "web_search_tool_result")
        result = {"type": block, "tool_use_id": call_id, "content": content}
        if kind == "web_search" and isinstance(content, list):
            for item in content:
                if isinstance(item, Mapping) and isinstance(item.get("url"), str):
                    turn.sources.append(Source(item["url"], str(item.get("title") or ""), str(item.get("title") or "")))
        if kind == "code_execution":
            turn.container = turn.container or {
                "id": context.container or context.new_id("container_011C"),
                "expires_at": _iso(context.now + CONTAINER_LIFETIME_S),
            }
        if kind == "advisor" and tool is not None:
            turn.advisor = tool
        if kind.startswith("tool_search") and isinstance(content, Mapping):
            for reference in content.get("tool_references") or []:
                if isinstance(reference, Mapping) and isinstance(reference.get("tool_name"), str):
                    turn.found.append(reference["tool_name"])
        turn.calls.append(ServerCall(call_id, name, dict(entry.get("input") or {}), result, COUNTED.get(kind)))
    return turn


_RESULT_BLOCK = {
    "bash_code_execution": "bash_code_execution_tool_result",
    "text_editor_code_execution": "text_editor_code_execution_tool_result",
}
_RESULT_FOR_KIND = {
    "web_search": "web_search_tool_result",
    "web_fetch": "web_fetch_tool_result",
    "code_execution": "bash_code_execution_tool_result",
    "tool_search_bm25": "tool_search_tool_result",
    "tool_search_regex": "tool_search_tool_result",
    "advisor": "advisor_tool_result",
}


def _opaque(*parts: str) -> str:
    """A stable stand-in for the live API's encrypted fields: a digest of what it stands for."""
    return base64.b64encode(hashlib.blake2b("\x1f".join(parts).encode(), digest_size=36).digest()).decode()


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")
