"""Prompt caching: which of a request's prompt tokens were read from the cache, as the live APIs report them.

OpenAI caches automatically (Chat Completions and the Responses API): a prompt of
``prompt_caching.min_tokens`` (1,024) or more is cached, and a later request from the same
organization that starts with the same prefix reads it from the cache. Cached tokens are
reported in ``usage`` (``prompt_tokens_details.cached_tokens``, ``input_tokens_details.cached_tokens``)
and read :data:`~mockserver.service.prefill.CACHED_SPEEDUP` times faster at prefill, so the TTFT is shorter.

How a prompt is cut into prefixes. The API family turns its request into :class:`Part` s in the
order the vendor reads them: the tools and the output format first, then each message
(instructions or system prompt first). A prefix ends at each part's end; it is named by a hash
chained over the model id and the parts' bytes, so two requests share a prefix exactly when they
agree byte for byte up to there. A hit is the longest such prefix the organization sent lately,
rounded down to a multiple of ``increment`` (128) tokens: it covers whole earlier messages, never
part of one (the live API matches within a message too). Prefixes shorter than ``min_tokens`` are
neither looked up nor written, and at most the :data:`LATEST_PREFIXES` longest are.

When. The lookup is made before the reply is planned (the TTFT depends on it); the prefixes are
written once the request is admitted (a refused request caches nothing), each for ``ttl_s``
(``extended_ttl_s`` with ``prompt_cache_retention: "24h"``), times ``time_scale`` as every wait
(unscaled at time scale 0, where an expiry of 0 would cache nothing). A hit refreshes what it read.

Anthropic caches explicitly (:func:`anthropic_lookup`): only prefixes that end at a part with a
``cache_control`` breakpoint are written, per workspace, for 5 minutes or an hour; a hit is the
exact token count of the longest one written, and the usage splits the prompt into what was read,
what was written and the rest.

Cost on the request path: a prompt counted under ``min_tokens`` (most requests) is skipped
before anything is hashed (:func:`may_cache` is a comparison with the count the window check
made, tool definitions included); the store is then not called. A long one is cut and hashed
:data:`PARTS_PER_TURN` parts at a time, with the event loop's turn between (the API families give
their parts one at a time). ``x-mock-prompt-cache: off``
(:func:`wanted`) keeps one request out. docs/prompt-caching.md is the user's account of all this.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from mockserver import errors
from mockserver.config.caching import ANTHROPIC_TTL_S, PromptCaching
from mockserver.config.fixture import Account, ModelSpec
from mockserver.engine import conversation, tokens
from mockserver.state.store import Store

LATEST_PREFIXES = 80  # as OpenAI, which looks at the latest 80 breakpoints of a conversation
PARTS_PER_TURN = 256  # parts cut and hashed between two turns of the event loop (a few ms of CPU)
HEADER = "x-mock-prompt-cache"  # "off": this request neither reads nor writes the prompt cache
_HEADER_VALUES = {"on": True, "off": False}
_DIGEST_BYTES = 16


@dataclass(frozen=True)
class Part:
    """One piece of a prompt, in the order the vendor reads it: what must match byte for byte, and its
    tokens. Anthropic's: ``breakpoint`` is the TTL (``5m``, ``1h``) of a ``cache_control`` marker in it."""

    data: bytes
    tokens: int
    breakpoint: str | None = None


def part(sent: Any, counted: int, breakpoint: str | None = None) -> Part:
    """The part of what was ``sent`` (any JSON value: a message, the tools), of ``counted`` tokens."""
    return Part(orjson.dumps(sent, option=orjson.OPT_SORT_KEYS), counted, breakpoint)


def head(tools: Any, output_format: Any, parsed_tools: Sequence[Any] | None) -> Part:
    """The part before the messages: the tools and the output format (its schema is cached too)."""
    return part([tools, output_format], conversation.tool_definition_tokens(parsed_tools))


def message_tokens(message: tokens.PromptMessage) -> int:
    """A message's share of the prompt count (the reply's priming tokens, which come last, aside)."""
    return tokens.count_messages([message]) - tokens.TOKENS_PER_REPLY


@dataclass(frozen=True)
class CacheUse:
    """What one request read from the prompt cache and wrote to it, in prompt tokens."""

    cached_tokens: int = 0
    written_tokens: int = 0
    written_1h: int = 0  # Anthropic: of the written tokens, those kept an hour (the rest: 5 minutes)


NO_CACHE = CacheUse()


@dataclass(frozen=True)
class Prefixes:
    """A prompt's cacheable prefixes, shortest first: each one's name, and its tokens."""

    names: tuple[str, ...]
    tokens: tuple[int, ...]


@dataclass(frozen=True)
class Lookup:
    """A request's cache lookup: what it read, and what to write once the request is admitted."""

    use: CacheUse
    scope: str = ""
    writes: tuple[tuple[str, float], ...] = ()

    async def write(self, store: Store, now: float) -> None:
        if self.writes:
            await store.cache_put(now, self.scope, self.writes)


MISSED = Lookup(NO_CACHE)


def wanted(headers: Mapping[str, str]) -> bool:
    """Whether the request lets the prompt cache in (``x-mock-prompt-cache: off`` does not), or the 400
    naming the header for a value that is neither ``on`` nor ``off``."""
    raw = headers.get(HEADER)
    if raw is None:
        return True
    allowed = _HEADER_VALUES.get(raw.strip().lower())
    if allowed is None:
        raise errors.InvalidRequestError(
            f"Invalid value for header '{HEADER}': '{raw}'. Expected 'on' or 'off'.", param=HEADER, code="invalid_value"
        )
    return allowed


def rate_limited_tokens(model: ModelSpec, prompt_tokens: int, use: CacheUse) -> int:
    """The prompt tokens the rate window counts: Anthropic's counts only those not read from the cache
    (its input-token limit leaves cache reads out); OpenAI's counts every prompt token, cached or not."""
    return max(0, prompt_tokens - use.cached_tokens) if model.api == "anthropic" else prompt_tokens


def may_cache(settings: PromptCaching, prompt_tokens: int, body: Any, min_tokens: int | None = None) -> bool:
    """Whether a request may have a cacheable prefix, without hashing anything: caching is on, and the
    prompt counted (tool definitions included, :func:`mockserver.service.context_window.measure`) is long
    enough (``min_tokens``: the model's own minimum, if it has one), or continues an earlier response
    (whose turns the count leaves out)."""
    if not settings.enabled:
        return False
    if prompt_tokens >= (min_tokens or settings.min_tokens):
        return True
    return isinstance(body, dict) and bool(body.get("previous_response_id"))


async def prefixes(model: str, parts: Iterable[Part], min_tokens: int) -> Prefixes:
    """The prefixes ending at each part's end that hold ``min_tokens`` or more (the latest :data:`LATEST_PREFIXES`)."""
    latest: deque[tuple[str, int]] = deque(maxlen=LATEST_PREFIXES)
    async for name, total, _ in _ends(model, parts):
        if total >= min_tokens:
            latest.append((name, total))
    return Prefixes(tuple(name for name, _ in latest), tuple(total for _, total in latest))


async def _ends(model: str, parts: Iterable[Part]) -> AsyncIterator[tuple[str, int, str | None]]:
    """Each part's end: the name of the prefix ending there, its tokens and the part's breakpoint (the
    reply's priming tokens, in the prompt's count, come after every prefix). The parts are cut and hashed
    :data:`PARTS_PER_TURN` at a time, with the event loop's turn between, so that a prompt of many
    thousand messages holds the loop no longer than a few milliseconds at once."""
    chain = hashlib.blake2b(model.encode(), digest_size=_DIGEST_BYTES)
    total = 0
    for index, piece in enumerate(parts, 1):
        chain.update(len(piece.data).to_bytes(8, "little"))  # so that two cuts of the same bytes differ
        chain.update(piece.data)
        total += piece.tokens
        yield chain.hexdigest(), total, piece.breakpoint
        if index % PARTS_PER_TURN == 0:
            await asyncio.sleep(0)


def ttl_seconds(base_s: float, time_scale: float) -> float:
    """A time to live on the server's clock: scaled as every wait, but unscaled at time scale 0."""
    return base_s * time_scale if time_scale > 0 else base_s


def rounded(count: int, settings: PromptCaching) -> int:
    """Tokens of a cached prefix as reported: a multiple of ``increment``, and 0 under ``min_tokens``."""
    floor = count // settings.increment * settings.increment
    return floor if floor >= settings.min_tokens else 0


async def openai_lookup(
    store: Store,
    now: float,
    settings: PromptCaching,
    *,
    organization: str,
    model: str,
    parts: Callable[[], Iterable[Part]],
    retention: object = None,
    time_scale: float,
    report_writes: bool = True,
) -> Lookup:
    """OpenAI's automatic caching: the hit of the longest prefix this organization sent lately, and the
    writes of every prefix of this prompt (the caller has checked :func:`may_cache`)."""
    found = await prefixes(model, parts(), settings.min_tokens)
    if not found.names:
        return MISSED
    scope = f"openai:{organization}"
    index = await store.cache_hit(now, scope, found.names)
    cached = rounded(found.tokens[index], settings) if index >= 0 else 0
    written = max(0, rounded(found.tokens[-1], settings) - cached) if report_writes else 0
    base = settings.extended_ttl_s if retention == "24h" else settings.ttl_s
    ttl = ttl_seconds(base, time_scale)
    return Lookup(CacheUse(cached, written), scope, tuple((name, ttl) for name in found.names))


async def anthropic_lookup(
    store: Store,
    now: float,
    settings: PromptCaching,
    *,
    workspace: str,
    model: str,
    parts: Callable[[], Iterable[Part]],
    min_tokens: int,
    time_scale: float,
) -> Lookup:
    """Anthropic's explicit caching: the prefix up to each ``cache_control`` breakpoint (``min_tokens`` or
    more) is written; the longest one this workspace wrote lately, up to the last breakpoint, is read."""
    latest: deque[tuple[str, int]] = deque(maxlen=LATEST_PREFIXES)
    candidates: list[tuple[str, int]] = []  # the latest prefixes up to the last breakpoint
    marked: list[tuple[str, int, str]] = []  # each breakpoint's prefix, its tokens and TTL
    async for name, total, ttl in _ends(model, parts()):
        if total >= min_tokens:
            latest.append((name, total))
        if ttl is not None:
            candidates = list(latest)
            marked.append((name, total, ttl))
    if not candidates:
        return MISSED
    scope = f"anthropic:{workspace}"
    index = await store.cache_hit(now, scope, [name for name, _ in candidates])
    read = candidates[index][1] if index >= 0 else 0
    writes: dict[str, float] = {}
    written = written_1h = below = 0
    for name, total, ttl in marked:
        if total < min_tokens:
            continue
        writes[name] = ttl_seconds(ANTHROPIC_TTL_S.get(ttl, ANTHROPIC_TTL_S["5m"]), time_scale)
        fresh = max(0, total - max(read, below))  # past what was read and what the breakpoint before wrote
        written += fresh
        written_1h += fresh if ttl == "1h" else 0
        below = total
    if index >= 0:  # a hit refreshes what it read (never shortening a longer time to live)
        writes.setdefault(candidates[index][0], ttl_seconds(ANTHROPIC_TTL_S["5m"], time_scale))
    return Lookup(CacheUse(read, written, written_1h), scope, tuple(writes.items()))


async def lookup(
    store: Store,
    now: float,
    settings: PromptCaching,
    *,
    account: Account,
    model: ModelSpec,
    body: Any,
    parts: Callable[[], Iterable[Part]],
    time_scale: float,
) -> Lookup:
    """The cache lookup of the API ``model`` is served by: OpenAI's per organization, Anthropic's per
    workspace (the key's project), each model with its own minimum (``cache_min_tokens``)."""
    min_tokens = model.cache_min_tokens or settings.min_tokens
    if model.api == "anthropic":
        workspace = f"{account.organization}/{account.project}"
        return await anthropic_lookup(
            store, now, settings, workspace=workspace, model=model.id, parts=parts, min_tokens=min_tokens,
            time_scale=time_scale,
        )  # fmt: skip
    return await openai_lookup(
        store,
        now,
        settings if min_tokens == settings.min_tokens else settings.model_copy(update={"min_tokens": min_tokens}),
        organization=account.organization,
        model=model.id,
        parts=parts,
        retention=body.get("prompt_cache_retention") if isinstance(body, dict) else None,
        time_scale=time_scale,
        report_writes=model.cache_writes_reported,
    )
