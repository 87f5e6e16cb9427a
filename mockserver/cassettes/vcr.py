"""VCR cassettes, as vcrpy, pytest-recording and the projects built on them write them.

A VCR cassette is a YAML (or JSON) document ``{"interactions": [{"request": ..., "response": ...}], "version": 1}``.
Each request has its ``method``, ``uri``, ``headers`` (a name to a list of values) and ``body`` (a string,
bytes written as ``!!binary``, or null); each response its ``status`` (``{"code": 200, ...}``), ``headers`` and
``body: {"string": ...}``. Project serializers add a parsed body beside the raw one, or instead of it
(``parsed_body``, ``json``); the parsed body is read when the raw one is missing. A body compressed with
its ``content-encoding`` is decoded: gzip, deflate, and brotli when the ``brotli`` package is installed
(``pip install 'mockserver[vcr]'``); without it, an interaction with a brotli body is skipped and says why.

:func:`read_vcr` reads files, folders (recursively) and globs, and keeps the interactions with the
inference endpoints of the OpenAI and Anthropic APIs (:data:`INFERENCE_PATHS`); every other interaction,
and every file that is not a VCR cassette, is listed in :attr:`VcrLoad.skipped` with the reason.
A VCR cassette holds no timing: when each event of a stream arrived is not recorded.

This module needs only PyYAML and the cassette format, so other tools can import it without the server.
"""

from __future__ import annotations

import glob
import gzip
import json
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from mockserver.cassettes.sse import EventCutter

# The inference endpoints whose recordings are served, by path (the query is not part of it).
INFERENCE_PATHS = frozenset(
    {
        "/v1/chat/completions",
        "/v1/responses",
        "/v1/embeddings",
        "/v1/moderations",
        "/v1/messages",
        "/v1/messages/count_tokens",
    }
)
API_HOSTS = frozenset({"api.openai.com", "api.anthropic.com"})
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0", "testserver"})  # a local server or proxy
VCR_SUFFIXES = (".yaml", ".yml", ".json")
MAX_VCR_FILE_BYTES = 256 * 1024 * 1024  # the bound of a native cassette
_PARSED_BODIES = ("parsed_body", "json")  # where project serializers keep a body they parsed
_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True)
class VcrInteraction:
    source: str  # "path/to/cassette.yaml#3": the file and the interaction's index in it, from 0
    method: str
    host: str
    path: str  # the query stripped
    request_body: bytes  # decoded
    request_json: Any | None
    status: int
    response_headers: dict[str, str]  # lower-case names; several values joined by ", "
    response_body: bytes  # decoded
    response_json: Any | None  # for a whole JSON reply
    sse_events: list[tuple[str | None, str]] | None  # (event name, data) of a text/event-stream reply


@dataclass(frozen=True)
class VcrSkip:
    source: str
    reason: str


@dataclass(frozen=True)
class VcrLoad:
    interactions: list[VcrInteraction]  # only the inference endpoints'
    skipped: list[VcrSkip]


_SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's, ten times faster


class _Loader(_SafeLoader):  # type: ignore[valid-type,misc]
    """YAML's safe loader, which also reads the Python string tags older vcrpy versions wrote."""


def _python_str(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    return str(loader.construct_scalar(node))  # type: ignore[arg-type]


_Loader.add_constructor("tag:yaml.org,2002:python/unicode", _python_str)
_Loader.add_constructor("tag:yaml.org,2002:python/str", _python_str)


def is_vcr_file(path: str | Path) -> bool:
    """Whether ``path`` names a VCR cassette: a YAML file, or a JSON document with ``interactions``."""
    source = Path(path)
    suffix = source.suffix.lower()
    if suffix in (".yaml", ".yml"):
        return True
    if suffix != ".json":
        return False
    try:
        with source.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return head.lstrip().startswith(b"{") and b'"interactions"' in head


def expand(paths: Sequence[str | Path], suffixes: Sequence[str] = VCR_SUFFIXES) -> list[Path]:
    """The files named by ``paths``: a file as it is, a folder's files with one of ``suffixes`` (recursively,
    sorted), a glob's matches (sorted). A path that names nothing is kept, so that reading it says why."""
    found: list[Path] = []
    for item in paths:
        text = str(item)
        if any(c in _GLOB_CHARS for c in text) and not Path(text).exists():
            found.extend(Path(p) for p in sorted(glob.glob(text, recursive=True)) if Path(p).is_file())
        elif Path(text).is_dir():
            found.extend(p for p in sorted(Path(text).rglob("*")) if p.is_file() and p.suffix.lower() in suffixes)
        else:
            found.append(Path(text))
    return found


def read_vcr(paths: Sequence[str | Path]) -> VcrLoad:
    """The inference interactions of the VCR cassettes at ``paths`` (files, folders, globs), and what was skipped."""
    interactions: list[VcrInteraction] = []
    skipped: list[VcrSkip] = []
    for source in expand(paths):
        document, problem = _document(source)
        if problem is not None:
            skipped.append(VcrSkip(str(source), problem))
            continue
        for index, item in enumerate(document):
            where = f"{source}#{index}"
            try:
                read = _interaction(where, item)
            except _Skip as exc:
                skipped.append(VcrSkip(where, str(exc)))
                continue
            interactions.append(read)
    return VcrLoad(interactions, skipped)


class _Skip(Exception):
    """An interaction that is not served; the message says why."""


def _document(source: Path) -> tuple[list[Any], str | None]:
    """The file's interactions, or why it is not a VCR cassette."""
    try:
        size = source.stat().st_size
        if size > MAX_VCR_FILE_BYTES:
            return [], f"{size} bytes, past the bound of {MAX_VCR_FILE_BYTES}"
        text = source.read_bytes()
    except OSError as exc:
        return [], f"cannot read it: {exc.strerror or exc}"
    try:
        data = json.loads(text) if source.suffix.lower() == ".json" else yaml.load(text, Loader=_Loader)
    except (ValueError, yaml.YAMLError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return [], f"not YAML or JSON that can be read safely ({first})"
    if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
        return [], "not a VCR cassette (no interactions list)"
    items = data["interactions"]
    if items and not any(isinstance(i, dict) and isinstance(i.get("request"), dict) for i in items):
        return [], "its interactions are not HTTP requests and responses (a websocket recording?)"
    return items, None


def _interaction(where: str, item: Any) -> VcrInteraction:
    if (
        not isinstance(item, dict)
        or not isinstance(item.get("request"), dict)
        or not isinstance(item.get("response"), dict)
    ):
        raise _Skip("not an HTTP interaction (no request and response)")
    request, response = item["request"], item["response"]
    method = str(request.get("method") or "").upper()
    split = urlsplit(str(request.get("uri") or ""))
    host = (split.hostname or "").lower()
    path = split.path or "/"
    if host not in API_HOSTS and host not in LOCAL_HOSTS:
        raise _Skip(f"{method} {host}{path}: not the OpenAI or Anthropic API")
    if method != "POST" or path not in INFERENCE_PATHS:
        raise _Skip(f"{method} {path}: not an inference endpoint")
    request_headers = _headers(request.get("headers"))
    response_headers = _headers(response.get("headers"))
    request_body = _body(request, request_headers)
    request_json = _json(request_body)
    if not isinstance(request_json, dict):
        raise _Skip(f"{method} {path}: the request body is not a JSON object")
    status = _status(response.get("status"))
    response_body = _body(response, response_headers)
    response_headers.pop("content-encoding", None)  # the body is decoded
    stream = "text/event-stream" in response_headers.get("content-type", "") or _looks_like_sse(response_body)
    events = sse_events(response_body) if stream and status < 400 else None
    if events is not None and not events:
        raise _Skip(f"{method} {path}: the recorded stream holds no events")
    response_json = None if events is not None else _json(response_body)
    if events is None and response_json is None:
        raise _Skip(f"{method} {path}: the reply is neither JSON nor a stream of events")
    return VcrInteraction(
        source=where,
        method=method,
        host=host,
        path=path,
        request_body=request_body,
        request_json=request_json,
        status=status,
        response_headers=response_headers,
        response_body=response_body,
        response_json=response_json,
        sse_events=events,
    )


def _headers(value: Any) -> dict[str, str]:
    """Lower-case names; a list of values joined by ``", "``."""
    headers: dict[str, str] = {}
    if not isinstance(value, dict):
        return headers
    for name, values in value.items():
        listed = values if isinstance(values, list) else [values]
        headers[str(name).lower()] = ", ".join(_text(v) for v in listed if v is not None)
    return headers


def _status(value: Any) -> int:
    code = value.get("code") if isinstance(value, dict) else value
    if isinstance(code, str) and code.strip().isdigit():
        code = int(code)
    if not isinstance(code, int) or isinstance(code, bool):
        raise _Skip(f"the response has no status code ({value!r})")
    status = code
    if not 100 <= status <= 599:
        raise _Skip(f"the response's status {status} is not an HTTP status")
    return status


def _body(part: dict[str, Any], headers: dict[str, str]) -> bytes:
    """The body's bytes, decoded from its ``content-encoding``; a parsed body when the raw one is missing."""
    raw = part.get("body")
    if isinstance(raw, dict):
        raw = raw.get("string")
    if raw is None or raw in ("", b""):
        for name in _PARSED_BODIES:
            if name in part and part[name] is not None:
                return json.dumps(part[name]).encode()
        return b""
    data = raw if isinstance(raw, bytes) else str(raw).encode()
    return _decoded(data, headers.get("content-encoding", ""))


def _decoded(data: bytes, encoding: str) -> bytes:
    for coding in reversed([c.strip().lower() for c in encoding.split(",") if c.strip()]):
        try:
            if coding in ("gzip", "x-gzip"):
                data = gzip.decompress(data)
            elif coding == "deflate":
                data = _inflate(data)
            elif coding == "br":
                data = _brotli(data)
        except (OSError, EOFError, zlib.error, _BrotliError):
            return data  # a recorder that decoded the body and kept the header: the body is as sent
    return data


class _BrotliError(Exception):
    pass


BROTLI_MISSING = (
    "its body is brotli-encoded (content-encoding: br) and the brotli package is not installed: "
    "pip install 'mockserver[vcr]'"
)


def _brotli(data: bytes) -> bytes:
    try:
        import brotli  # type: ignore[import-untyped]
    except ImportError:  # the ``vcr`` extra brings it: most cassettes hold no brotli body
        raise _Skip(BROTLI_MISSING) from None
    try:
        out: bytes = brotli.decompress(data)
    except brotli.error as exc:
        raise _BrotliError(str(exc)) from None
    return out


def _inflate(data: bytes) -> bytes:
    try:
        return zlib.decompress(data)
    except zlib.error:
        return zlib.decompress(data, -zlib.MAX_WBITS)  # raw deflate, as some servers send it


def _json(data: bytes) -> Any | None:
    if not data.strip():
        return None
    try:
        return json.loads(data)
    except ValueError:
        return None


def _looks_like_sse(data: bytes) -> bool:
    head = data.lstrip()[:16]
    return head.startswith((b"event:", b"data:"))


def sse_events(data: bytes) -> list[tuple[str | None, str]]:
    """The Server-Sent Events of a whole recorded stream: each ``(event name, data)``, comments left out."""
    cutter = EventCutter()
    cutter.feed(data, 0.0)
    cutter.close(0.0)
    return [(event.event, event.data) for event in cutter.events]


def _text(value: Any) -> str:
    return value.decode("utf-8", errors="replace") if isinstance(value, bytes) else str(value)
