"""Recorded request/reply pairs to measure against, from a corpus file or from VCR cassettes.

A pair is one recorded POST to an inference endpoint that the real API answered with a 200: its
request body, and its reply (whole JSON, or the stream's events). Two sources:

- a corpus file (``*.jsonl``): one pair per line, as ``{"repo", "commit", "path", "interaction",
  "endpoint", "stream", "request", "response" | "events", "done", "query", "anthropic_version"}``;
- VCR cassettes (vcrpy's YAML or JSON, and the serializers built on it), read by
  :func:`mockserver.cassettes.vcr.read_vcr`: only the inference interactions answered with a 200
  are pairs; the rest are skipped, each with its reason.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from mockserver.recording.conformance.shapes import ENDPOINTS, Event, events_from_pairs

CORPUS_SUFFIX = ".jsonl"
LIVE_HOSTS = frozenset({"api.openai.com", "api.anthropic.com"})  # a reply from elsewhere is not the live API's
OK = 200


@dataclass(frozen=True)
class Pair:
    source: str  # where it was recorded: ``repo:path#interaction`` or ``file#index``
    endpoint: str  # one of shapes.ENDPOINTS
    request: dict[str, Any]
    stream: bool
    response: Any = None  # the whole reply's JSON
    events: tuple[Event, ...] = ()  # a stream's events
    done: bool = False  # a stream that ended with ``data: [DONE]``
    query: str = ""
    anthropic_version: str | None = None
    anthropic_beta: str | None = None
    repo: str = ""  # the repository the recording comes from, where known


@dataclass(frozen=True)
class Skipped:
    source: str
    reason: str


@dataclass
class Loaded:
    pairs: list[Pair] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


class VcrInteraction(Protocol):
    """What :mod:`mockserver.cassettes.vcr` reads of one recorded interaction (the fields used here)."""

    @property
    def source(self) -> str: ...
    @property
    def method(self) -> str: ...
    @property
    def host(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def request_json(self) -> Any: ...
    @property
    def status(self) -> int: ...
    @property
    def response_json(self) -> Any: ...
    @property
    def sse_events(self) -> list[tuple[str | None, str]] | None: ...


class VcrSkip(Protocol):
    @property
    def source(self) -> str: ...
    @property
    def reason(self) -> str: ...


class VcrLoad(Protocol):
    @property
    def interactions(self) -> Sequence[VcrInteraction]: ...
    @property
    def skipped(self) -> Sequence[VcrSkip]: ...


class PairsError(ValueError):
    """An input that cannot be read: the message names the file and the cause."""


def corpus_pair(record: dict[str, Any]) -> Pair:
    """One line of a corpus file as a pair."""
    events = tuple(Event(e.get("event"), e.get("data")) for e in record.get("events") or ())
    return Pair(
        source=f"{record['repo']}:{record['path']}#{record['interaction']}",
        endpoint=record["endpoint"],
        request=record["request"],
        stream=bool(record["stream"]),
        response=record.get("response"),
        events=events,
        done=bool(record.get("done")),
        query=record.get("query") or "",
        anthropic_version=record.get("anthropic_version"),
        anthropic_beta=record.get("anthropic_beta"),
        repo=record["repo"],
    )


def read_corpus(path: Path) -> list[Pair]:
    pairs = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                pairs.append(corpus_pair(json.loads(line)))
            except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
                raise PairsError(f"{path}:{number}: not a corpus line ({type(exc).__name__}: {exc})") from exc
    return pairs


def server_state(request: dict[str, Any]) -> str | None:
    """What server-side state the request names (the generator has none of it, and would refuse), or None."""
    if request.get("previous_response_id"):
        return "a previous response (previous_response_id)"
    if request.get("conversation"):
        return "a stored conversation"
    if request.get("container") or request.get("mcp_servers"):
        return "a container or a remote MCP server"
    tools = request.get("tools")
    for tool in tools if isinstance(tools, list) else ():
        kind = tool.get("type") if isinstance(tool, dict) else None
        if kind == "file_search" or (kind == "mcp" and tool.get("server_url")):
            return f"a {kind} tool's server-side state"
        if kind == "code_interpreter" and isinstance(tool.get("container"), str):
            return "a container"
    return _stored_item(request.get("input")) or _stored_item(request.get("messages"))


def _stored_item(items: Any) -> str | None:
    """An uploaded file or a stored item that an input list or a message list refers to."""
    for item in items if isinstance(items, list) else ():
        if not isinstance(item, dict):
            continue
        if item.get("type") == "item_reference":
            return "a stored item (item_reference)"
        content = item.get("content")
        for part in content if isinstance(content, list) else ():
            source = part.get("source") if isinstance(part, dict) else None
            if isinstance(part, dict) and (part.get("file_id") or (isinstance(source, dict) and source.get("file_id"))):
                return "an uploaded file (file_id)"
    return None


def pairs_from_vcr(load: VcrLoad) -> Loaded:
    """The pairs among VCR interactions: POSTs to an inference endpoint of the live APIs answered with a 200."""
    out = Loaded(skipped=[Skipped(s.source, s.reason) for s in load.skipped])
    for interaction in load.interactions:
        path = urlsplit(interaction.path)
        endpoint = next((e for e in ENDPOINTS if path.path.endswith(e)), None)
        reason = None
        if interaction.method.upper() != "POST" or endpoint is None:
            reason = f"{interaction.method} {path.path}: not a Chat, Responses, embeddings or Messages request"
        elif interaction.host not in LIVE_HOSTS:
            reason = f"recorded from {interaction.host}: not the live OpenAI or Anthropic API"
        elif interaction.status != OK:
            reason = f"recorded status {interaction.status}: only replies of 200 are compared"
        elif not isinstance(interaction.request_json, dict):
            reason = "the request body is not a JSON object"
        elif interaction.sse_events is None and interaction.response_json is None:
            reason = "the reply is neither JSON nor an event stream"
        elif (state := server_state(interaction.request_json)) is not None:
            reason = f"names server-side state the generator does not have ({state})"
        if reason is not None or endpoint is None:
            out.skipped.append(Skipped(interaction.source, reason or ""))
            continue
        events, done = events_from_pairs(interaction.sse_events or ())
        out.pairs.append(
            Pair(
                source=interaction.source,
                endpoint=endpoint,
                request=interaction.request_json,
                stream=interaction.sse_events is not None,
                response=interaction.response_json,
                events=tuple(events),
                done=done,
                query=path.query,
            )
        )
    return out


def load(paths: Sequence[str | Path]) -> Loaded:
    """Pairs from corpus files (``*.jsonl``) and VCR cassettes (files, folders or globs), in the order given."""
    corpora = [Path(p) for p in paths if str(p).endswith(CORPUS_SUFFIX)]
    cassettes = [p for p in paths if not str(p).endswith(CORPUS_SUFFIX)]
    out = Loaded()
    for corpus in corpora:
        try:
            out.pairs += read_corpus(corpus)
        except OSError as exc:
            raise PairsError(f"{corpus}: {exc.strerror or exc}") from exc
    if cassettes:
        try:
            vcr = importlib.import_module("mockserver.cassettes.vcr")
        except ImportError as exc:
            raise PairsError(f"cannot read VCR cassettes here ({exc}); give a corpus file (*.jsonl)") from exc
        found = pairs_from_vcr(vcr.read_vcr(cassettes))
        out.pairs += found.pairs
        out.skipped += found.skipped
    return out


def repositories(pairs: Iterable[Pair]) -> list[str]:
    return sorted({p.repo for p in pairs if p.repo})
