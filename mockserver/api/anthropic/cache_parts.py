"""A Messages request's prompt as Anthropic's prompt cache matches it (:mod:`mockserver.service.prompt_cache`).

The parts come in the order the model reads them: the tools, the system prompt, then each message.
A ``cache_control`` marker (``{"type": "ephemeral"}``, with ``"ttl": "5m"`` or ``"1h"``) on a tool,
a system block or a content block makes the end of that part a breakpoint: a marker covers the
whole tools list, system prompt or message it is in. A top-level ``cache_control`` puts one on the
last message (Anthropic's automatic caching). The markers are left out of what must match, so
moving one does not change the prefix before it. Each part's tokens are counted as
``usage.input_tokens`` counts them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from mockserver import errors
from mockserver.api.anthropic import turns
from mockserver.api.anthropic.errors import invalid_request
from mockserver.api.anthropic.schemas import MessagesRequest
from mockserver.engine import conversation, tokens
from mockserver.service import prompt_cache
from mockserver.service.prompt_cache import Part

MAX_BREAKPOINTS = 4
TTLS = ("5m", "1h")


def check_breakpoints(body: MessagesRequest) -> None:
    """Refuse malformed ``cache_control`` markers, a 1-hour marker after a 5-minute one, and more than
    :data:`MAX_BREAKPOINTS` (a top-level marker takes a slot of its own unless the last message's last
    block has one already), as the live API does."""
    found = 0
    short_seen = False
    for where, marker in _markers(body):
        short_seen = _in_order(_ttl(marker, where), where, short_seen)
        found += 1
    if body.cache_control is not None:
        _in_order(_ttl(body.cache_control, "cache_control"), "cache_control", short_seen)
        found += 0 if _last_block_marked(body) else 1
    if found > MAX_BREAKPOINTS:
        raise invalid_request(
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {found}."
        )


def _in_order(ttl: str, where: str, short_seen: bool) -> bool:
    """Whether a 5-minute marker has been seen once this one is: the live API refuses a 1-hour one after it."""
    if ttl == "1h" and short_seen:
        raise invalid_request(
            f"{where}.ttl: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. "
            "Note that blocks are processed in the following order: `tools`, `system`, `messages`."
        )
    return short_seen or ttl == "5m"


def _last_block_marked(body: MessagesRequest) -> bool:
    content = body.messages[-1].content if body.messages else None
    return isinstance(content, list) and bool(content) and _marked(content[-1])


def _marked(block: Any) -> bool:
    return isinstance(block, Mapping) and block.get("cache_control") is not None


def message_parts(body: MessagesRequest, reading: turns.Reading) -> Iterator[Part]:
    """The parts one at a time, so that the service cuts a long conversation in pieces; each message's
    tokens are those of its text as ``reading`` read it (:func:`turns.read_ahead`). Nothing for a request
    with no breakpoint, or that its planning will refuse (the planner's own check answers it)."""
    if body.cache_control is None and next(_markers(body), None) is None:
        return
    if isinstance(reading.result, errors.MockAPIError):
        return
    automatic = _last_ttl([body.cache_control])
    pending = prompt_cache.part(  # each part is given once the next is known: the last takes the automatic one
        [_unmarked(tool) for tool in body.tools or ()],
        conversation.tool_definition_tokens(body.tools),
        _last_ttl(tool.get("cache_control") for tool in body.tools or ()),
    )
    for part in _conversation_parts(body, iter(reading.result.texts)):
        yield pending
        pending = part
    if automatic is not None and pending.breakpoint is None:
        pending = Part(pending.data, pending.tokens, automatic)
    yield pending


def _conversation_parts(body: MessagesRequest, texts: Iterator[str]) -> Iterator[Part]:
    """The system prompt's part, then each message's, as ``texts`` reads them."""
    if body.system:
        system = body.system
        sent = system if isinstance(system, str) else [_unmarked(block) for block in system]
        marks = () if isinstance(system, str) else (block.get("cache_control") for block in system)
        yield prompt_cache.part(sent, _tokens(next(texts)), _last_ttl(marks))
    for message, text in zip(body.messages, texts, strict=False):
        content = message.content
        sent = content if isinstance(content, str) else [_unmarked(block) for block in content]
        marks = () if isinstance(content, str) else (block.get("cache_control") for block in content)
        yield prompt_cache.part([message.role, sent], _tokens(text), _last_ttl(marks))


def _markers(body: MessagesRequest) -> Iterator[tuple[str, Any]]:
    """Every ``cache_control`` marker of the request, with where it is."""
    for i, tool in enumerate(body.tools or ()):
        if tool.get("cache_control") is not None:
            yield f"tools.{i}.cache_control", tool["cache_control"]
    if isinstance(body.system, list):
        for j, block in enumerate(body.system):
            if isinstance(block, Mapping) and block.get("cache_control") is not None:
                yield f"system.{j}.cache_control", block["cache_control"]
    for i, message in enumerate(body.messages):
        if isinstance(message.content, list):
            for j, block in enumerate(message.content):
                if isinstance(block, Mapping) and block.get("cache_control") is not None:
                    yield f"messages.{i}.content.{j}.cache_control", block["cache_control"]


def _ttl(marker: Any, where: str) -> str:
    if not isinstance(marker, Mapping) or marker.get("type") != "ephemeral":
        raise invalid_request(f"{where}.type: Input should be 'ephemeral'")
    ttl = marker.get("ttl", "5m")
    if ttl not in TTLS:
        raise invalid_request(f"{where}.ttl: Input should be '5m' or '1h'")
    return str(ttl)


def _last_ttl(marks: Any) -> str | None:
    ttl = None
    for mark in marks:
        if isinstance(mark, Mapping):
            ttl = str(mark.get("ttl", "5m"))
    return ttl


def _unmarked(block: Any) -> Any:
    if isinstance(block, Mapping) and "cache_control" in block:
        return {k: v for k, v in block.items() if k != "cache_control"}
    return block


def _tokens(text: str) -> int:
    return prompt_cache.message_tokens(tokens.PromptMessage("user", text))  # a bare text's role is one token
