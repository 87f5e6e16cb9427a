"""The Responses API's hosted tools, run deterministically: which ones a reply calls, and what they find.

A request that lists a hosted tool gets, before its answer, the tool's call item, completed, as the
live API sends it (and the events a stream carries for it):

- ``web_search`` (and ``web_search_preview``): a ``web_search_call`` searching for the latest user
  message; the answer cites what it found with ``url_citation`` annotations. The pages are the
  fixture's ``hosted_tools.web_search.results``, else made up on the reserved example domains.
- ``image_generation``: an ``image_generation_call`` whose ``result`` is a small valid PNG.
- ``code_interpreter``: a ``code_interpreter_call`` with its code and the logs it printed.
- ``file_search``: a ``file_search_call`` over the vector stores it names, which the fixture declares
  (``hosted_tools.vector_stores``); a store it does not declare is refused with the live 404.
- ``tool_search``: server-executed (the default), a ``tool_search_call`` and the ``tool_search_output``
  that loads the deferred functions (``defer_loading``), before the answer; client-executed
  (``execution: "client"``), a ``tool_search_call`` the client answers, which ends the turn.

Each is called at most once a turn, and not again once the conversation holds its call after the
latest user message. ``tool_choice`` applies: ``none`` or a named function calls none; a hosted
tool's own choice (``{"type": "web_search"}``) or ``allowed_tools`` calls only those it names.
"""

from __future__ import annotations

import base64
import re
import struct
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mockserver import errors
from mockserver.config.hosted_tools import HostedTools, SearchResult

SEARCH_KINDS = frozenset({"web_search", "web_search_preview", "web_search_2025_08_26", "web_search_preview_2025_03_11"})
HOSTED_KINDS = SEARCH_KINDS | {"image_generation", "code_interpreter", "file_search", "tool_search"}
# The item type each hosted tool's call has in the conversation.
_CALL_KIND = {
    **dict.fromkeys(SEARCH_KINDS, "web_search_call"),
    "image_generation": "image_generation_call",
    "code_interpreter": "code_interpreter_call",
    "file_search": "file_search_call",
    "tool_search": "tool_search_output",
}
# What gpt-image-1 spends on one 1024x1024 image, by quality (OpenAI's published image-token figures).
IMAGE_TOKENS = {"low": 272, "medium": 1056, "high": 4160, "auto": 1056}
MAX_QUERY_CHARS = 100
SOURCES_INCLUDE = "web_search_call.action.sources"  # the include value that lists a search's sources
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class HostedCall:
    """One hosted tool's output item: ``prefix`` of its id, the item as ``response.output_item.added``
    shows it and as it is done (both without ``id``), and the events between them, as
    ``(event type, fields)``."""

    prefix: str
    added: Mapping[str, Any]
    done: Mapping[str, Any]
    events: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    call_id: bool = False  # the item carries a ``call_id`` the client answers (a client-executed tool search)


@dataclass(frozen=True)
class Hosted:
    """What a reply's hosted tools did, before its answer."""

    calls: tuple[HostedCall, ...] = ()
    citations: tuple[SearchResult, ...] = ()  # the pages the answer cites
    web_searches: int = 0
    image_tokens: int = 0
    ends_turn: bool = False  # a client-executed tool search: the client answers it, the reply stops there


def plan_hosted(
    tools: Sequence[Mapping[str, Any]] | None,
    tool_choice: str | Mapping[str, Any] | None,
    items: Sequence[tuple[str, str]],
    *,
    latest: str,
    data: HostedTools,
    include: Sequence[str] = (),
) -> Hosted:
    """The hosted calls a reply makes (see the module's docstring). ``items`` is the conversation as
    ``(kind, text)`` items, ``latest`` the latest user message, ``data`` the fixture's hosted-tool data,
    ``include`` the request's ``include`` (``web_search_call.action.sources`` lists a search's sources)."""
    listed = [t for t in tools or () if t.get("type") in HOSTED_KINDS]
    for tool in listed:
        if tool.get("type") == "file_search":
            _check_stores(tool, data)
    wanted = _wanted_kinds(tool_choice)
    if not listed or (wanted is not None and not wanted):
        return Hosted()
    done = _called_since_user(items)
    query = _query(latest)
    calls: list[HostedCall] = []
    citations: tuple[SearchResult, ...] = ()
    searches = image_tokens = 0
    seen: set[str] = set()
    for tool in listed:
        kind = str(tool["type"])
        family = "web_search" if kind in SEARCH_KINDS else kind
        if family in seen or (wanted is not None and family not in wanted) or _CALL_KIND[kind] in done:
            continue
        seen.add(family)
        if family == "web_search":
            citations = tuple(data.web_search.results) or _made_up_pages(query)
            calls.append(_web_search_call(query, citations if SOURCES_INCLUDE in include else ()))
            searches += 1
        elif kind == "image_generation":
            quality = str(tool.get("quality") or "auto")
            calls.append(_image_call(tool, query, quality))
            image_tokens += IMAGE_TOKENS.get(quality, IMAGE_TOKENS["auto"])
        elif kind == "code_interpreter":
            calls.append(_code_call(data, query))
        elif kind == "file_search":
            calls.append(_file_search_call(tool, data, query))
        elif tool.get("execution") == "client":
            if "tool_search_call" not in done:
                return Hosted(calls=(*calls, _client_search_call(query)), ends_turn=True)
        else:
            calls.extend(_server_search(_deferred(tools or ())))
    return Hosted(tuple(calls), citations, searches, image_tokens)


def _wanted_kinds(tool_choice: str | Mapping[str, Any] | None) -> set[str] | None:
    """The hosted tool families ``tool_choice`` lets a reply call: None for any, empty for none."""
    if tool_choice == "none":
        return set()
    if not isinstance(tool_choice, Mapping):
        return None
    kind = tool_choice.get("type")
    if kind == "function":
        return set()
    if kind in HOSTED_KINDS:
        return {"web_search" if kind in SEARCH_KINDS else str(kind)}
    if kind == "allowed_tools":
        inner = tool_choice.get("allowed_tools")
        listed = inner.get("tools") if isinstance(inner, Mapping) else tool_choice.get("tools")
        kinds = {str(t.get("type")) for t in listed or () if isinstance(t, Mapping)}
        return {"web_search" if k in SEARCH_KINDS else k for k in kinds & HOSTED_KINDS}
    return None


def _called_since_user(items: Sequence[tuple[str, str]]) -> set[str]:
    """The item kinds after the latest user message."""
    kinds: set[str] = set()
    for kind, _ in reversed(items):
        if kind == "user":
            break
        kinds.add(kind)
    return kinds


def _query(latest: str) -> str:
    """What a search looks for: the latest user message's words, shortened."""
    words = _WORD.findall(latest)
    query = " ".join(words)
    return query[:MAX_QUERY_CHARS].rstrip() or "search"


def _web_search_call(query: str, sources: Sequence[SearchResult] = ()) -> HostedCall:
    """A search for ``query``; its finished action lists ``sources`` (the pages found) when there are any."""
    action = {"type": "search", "query": query, "queries": [query]}
    listed = {"sources": [{"type": "url", "url": page.url} for page in sources]} if sources else {}
    phases = ("in_progress", "searching", "completed")
    return HostedCall(
        "ws",
        # The live API's added item has no action yet; the SDK's type requires one, so it is there from the start.
        {"type": "web_search_call", "status": "in_progress", "action": action},
        {"type": "web_search_call", "status": "completed", "action": {**action, **listed}},
        tuple((f"response.web_search_call.{phase}", {}) for phase in phases),
    )


def _made_up_pages(query: str) -> tuple[SearchResult, ...]:
    """Two pages on the reserved example domains (RFC 2606), titled after the query."""
    slug = "-".join(query.lower().split()[:6]) or "search"
    title = query[:60]
    return (
        SearchResult(title=f"{title} - Example Reference", url=f"https://example.com/{slug}"),
        SearchResult(title=f"{title} - Example Guide", url=f"https://example.org/guides/{slug}"),
    )


def web_search_pages(options: Any, data: HostedTools, latest: str) -> tuple[SearchResult, ...]:
    """The pages a Chat request's ``web_search_options`` search finds (none when it sets none): the
    fixture's ``hosted_tools.web_search.results``, else made-up ones for the latest user message."""
    if not isinstance(options, Mapping):
        return ()
    return tuple(data.web_search.results) or _made_up_pages(_query(latest))


def citations_for(text: str, pages: Sequence[SearchResult]) -> list[dict[str, Any]]:
    """``url_citation`` annotations citing ``pages`` over ``text``: each page cites one consecutive
    stretch of it, the stretches cut at spaces where there are any (offsets in characters)."""
    if not text or not pages:
        return []
    cited = pages[: max(1, min(len(pages), len(text) // 20))]
    bounds = [len(text) * i // len(cited) for i in range(len(cited) + 1)]
    for i in range(1, len(cited)):
        space = text.find(" ", bounds[i])
        if 0 < space < bounds[i + 1]:
            bounds[i] = space + 1
    return [
        {"type": "url_citation", "start_index": bounds[i], "end_index": bounds[i + 1], "title": p.title, "url": p.url}
        for i, p in enumerate(cited)
    ]


def _image_call(tool: Mapping[str, Any], query: str, quality: str) -> HostedCall:
    fields = {
        "background": tool.get("background") if tool.get("background") not in (None, "auto") else "opaque",
        "output_format": "png",  # always a PNG: the small one this module draws
        "quality": "medium" if quality == "auto" else quality,
        "size": tool.get("size") if tool.get("size") not in (None, "auto") else "1024x1024",
    }
    done = {
        "type": "image_generation_call",
        "status": "completed",
        "action": "generate",
        **fields,
        "result": SMALL_PNG,
        "revised_prompt": query,
    }
    phases = ("in_progress", "generating", "completed")
    return HostedCall(
        "ig",
        {"type": "image_generation_call", "status": "in_progress", "result": None},
        done,
        tuple((f"response.image_generation_call.{phase}", {}) for phase in phases),
    )


def _code_call(data: HostedTools, query: str) -> HostedCall:
    scripted = data.code_interpreter
    code = scripted.code or f"query = {query!r}\nprint(len(query.split()), 'words')"
    logs = scripted.logs if scripted.logs is not None else f"{len(query.split())} words\n"
    container = "cntr_mock"
    done = {
        "type": "code_interpreter_call",
        "status": "completed",
        "code": code,
        "container_id": container,
        "outputs": [{"type": "logs", "logs": logs}],
    }
    return HostedCall(
        "ci",
        {
            "type": "code_interpreter_call",
            "status": "in_progress",
            "code": "",
            "container_id": container,
            "outputs": None,
        },
        done,
        (
            ("response.code_interpreter_call.in_progress", {}),
            ("response.code_interpreter_call_code.delta", {"delta": code}),
            ("response.code_interpreter_call_code.done", {"code": code}),
            ("response.code_interpreter_call.interpreting", {}),
            ("response.code_interpreter_call.completed", {}),
        ),
    )


def _store_ids(tool: Mapping[str, Any]) -> list[str]:
    ids = tool.get("vector_store_ids")
    return [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []


def _check_stores(tool: Mapping[str, Any], data: HostedTools) -> None:
    """Refuse a ``file_search`` naming a vector store the fixture does not declare: the live 404."""
    declared = {store.id for store in data.vector_stores}
    for store_id in _store_ids(tool):
        if store_id not in declared:
            raise errors.NotFoundError(f"Vector store with id '{store_id}' not found.", param="tools")


def _file_search_call(tool: Mapping[str, Any], data: HostedTools, query: str) -> HostedCall:
    named = set(_store_ids(tool))
    results = [
        {"file_id": f.file_id, "filename": f.filename, "score": 1.0, "text": f.text, "attributes": {}}
        for store in data.vector_stores
        if store.id in named
        for f in store.files
    ]
    phases = ("in_progress", "searching", "completed")
    return HostedCall(
        "fs",
        {"type": "file_search_call", "status": "in_progress", "queries": [], "results": None},
        {"type": "file_search_call", "status": "completed", "queries": [query], "results": results},
        tuple((f"response.file_search_call.{phase}", {}) for phase in phases),
    )


def _deferred(tools: Sequence[Mapping[str, Any]]) -> list[tuple[str, Mapping[str, Any]]]:
    """The functions a tool search may load: ``(name, tool)`` of each function sent with ``defer_loading``,
    and of each namespace with deferred functions."""
    found: list[tuple[str, Mapping[str, Any]]] = []
    for tool in tools:
        kind = tool.get("type")
        name = tool.get("name")
        if not isinstance(name, str):
            continue
        if (kind == "function" and tool.get("defer_loading")) or (
            kind == "namespace"
            and any(isinstance(t, Mapping) and t.get("defer_loading") for t in tool.get("tools") or ())
        ):
            found.append((name, tool))
    return found


def _loaded(tool: Mapping[str, Any]) -> dict[str, Any]:
    """A tool as a tool search's output lists it: a function with the ``output_schema`` and ``strict`` the
    API fills in; a namespace as sent, each of its functions with ``strict`` filled in (no ``output_schema``)."""
    if tool.get("type") != "namespace":
        return {"output_schema": None, "strict": True, **tool}
    inner = tool.get("tools") or ()
    return {**tool, "tools": [{"strict": True, **t} if isinstance(t, Mapping) else t for t in inner]}


def _server_search(deferred: Sequence[tuple[str, Mapping[str, Any]]]) -> list[HostedCall]:
    if not deferred:  # nothing to load: the model does not search
        return []
    paths = [name for name, _ in deferred]
    loaded = [_loaded(tool) for _, tool in deferred]
    call = {"type": "tool_search_call", "status": "completed", "arguments": {"paths": paths}}
    output = {"type": "tool_search_output", "status": "completed", "tools": loaded}
    server = {"call_id": None, "execution": "server"}
    return [
        HostedCall("tsc", {**call, "status": "in_progress", "arguments": {}, **server}, {**call, **server}),
        HostedCall("tso", {**output, "status": "in_progress", **server}, {**output, **server}),
    ]


def _client_search_call(query: str) -> HostedCall:
    call = {"type": "tool_search_call", "arguments": {"queries": [query]}, "execution": "client"}
    return HostedCall(
        "tsc",
        {**call, "status": "in_progress", "arguments": {}},
        {**call, "status": "completed"},
        call_id=True,
    )


def _png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A valid PNG of one colour (8-bit RGB, no interlace)."""

    def chunk(kind: bytes, payload: bytes) -> bytes:
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


SMALL_PNG = base64.b64encode(_png(16, 16, (90, 140, 200))).decode()  # every generated image: 16x16, one blue
