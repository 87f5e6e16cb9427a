"""Counting a request's prompt once, without holding the event loop, and only as far as it matters.

o200k counting runs on the event loop at about 0.3 µs per token (``python -m benchmarks prompt_count``).
A large prompt is therefore counted in pieces of :data:`PIECE_CHARS`
characters (about a millisecond each), and the loop gets its turn between pieces: other
requests, streams and ``/health`` wait at most one piece. Short texts are counted together, at
most a piece's worth of characters or :data:`MESSAGES_PER_TURN` of them between two turns, so a
conversation of many thousand one-line messages is cut in pieces too. So is the reading of the
messages before any counting (their sizes, their texts and framing: :mod:`mockserver.engine.in_turns`),
whichever way they are then counted.

Counting stops once the count passes ``limit`` (the model's context window): the request will
be refused anyway, so a body at the size limit costs no more than counting one window. The
rest is then estimated from the tokens per character counted so far (:attr:`PromptCount.exact`
is false).

The long texts counted here (and every text of a prompt counted in pieces) are remembered for the
rest of the request (:func:`mockserver.engine.tokens.remember`), so the reply's usage and the prompt
cache's parts (:mod:`mockserver.service.prompt_cache`) do not count them again.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from mockserver.engine import in_turns, tokens
from mockserver.engine.tokens import PromptMessage

Item = TypeVar("Item")

# About 1 ms of counting on this kind of machine: the longest the loop waits for a prompt being counted.
PIECE_CHARS = 16_384
# Short texts counted between two turns at most (a conversation of many thousand one-line messages).
MESSAGES_PER_TURN = 256


@dataclass(slots=True)
class PromptCount:
    """A prompt's tokens as :func:`mockserver.engine.tokens.count_messages` counts them.

    ``exact`` is false when counting stopped past the limit: ``tokens`` is then the tokens counted
    so far plus an estimate of the rest, at the rate counted so far.

    Made for every request and never changed (:func:`dataclasses.replace` makes another): not frozen,
    as a frozen dataclass sets each field through ``object.__setattr__``, several times the cost to make.
    """

    tokens: int
    exact: bool = True


async def count_messages(messages: Sequence[PromptMessage | str], limit: int | None = None) -> PromptCount:
    """:func:`mockserver.engine.tokens.count_messages` of ``messages``, yielding to the loop between
    pieces, and stopping once past ``limit``. A prompt shorter than one piece is counted at once.
    A message's text is counted with its framing, role and name (:class:`_Parts`)."""
    if len(messages) <= in_turns.ITEMS_PER_TURN:  # most prompts: a few messages, read at once
        size = _chars_of(messages)
        if size <= tokens.REMEMBERED_CHARS:  # every text's count is remembered across requests
            return PromptCount(tokens.count_messages(messages))
    else:
        size = await in_turns.summed(_chars_of, messages)
        if size <= tokens.REMEMBERED_CHARS:
            return PromptCount(tokens.TOKENS_PER_REPLY + await in_turns.summed(_message_tokens, messages))
    parts = _Parts()
    await in_turns.summed(parts.add, messages)
    return await _count_parts(parts, size, limit)


def counted_at_once(messages: Sequence[PromptMessage | str]) -> PromptCount | None:
    """:func:`count_messages` of a prompt it counts at once (a few messages, no more characters than a
    remembered text: most prompts), without a coroutine; None for any other prompt."""
    if len(messages) <= in_turns.ITEMS_PER_TURN and _chars_of(messages) <= tokens.REMEMBERED_CHARS:
        return PromptCount(tokens.count_messages(messages))
    return None


async def count_read(
    read: Callable[[Sequence[Item]], Sequence[PromptMessage | str]], items: Sequence[Item], limit: int | None = None
) -> PromptCount:
    """:func:`count_messages` of the messages ``read(items)`` gives, read :data:`MESSAGES_PER_TURN` items at
    a time with the loop's turn between pieces (:func:`mockserver.engine.in_turns.summed`). Only the texts
    to count and their framing are kept: each piece's messages are dropped once read, as many thousand
    objects kept (or made) for the whole count would wake the garbage collector's passes over the whole
    heap, a large request's body included. An exception from ``read`` ends it, before anything is counted
    or remembered."""
    if len(items) <= in_turns.ITEMS_PER_TURN:  # most prompts: a few messages, read at once
        return await count_messages(read(items), limit)
    parts = _Parts()
    size = await in_turns.summed(lambda piece: parts.add(read(piece)), items)
    return await _count_parts(parts, size, limit)


class _Parts:
    """The texts to count, each with the framing tokens that come with it: a message's text with its
    framing, role and name (short, their counts remembered), or, when its role or name is long, each of
    them as a text of its own (:func:`mockserver.engine.tokens.message_parts`). Two lists side by side,
    not a tuple per text: no new object per message for the garbage collector to count."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.framings: list[int] = []

    def add(self, messages: Sequence[PromptMessage | str]) -> int:
        """Take the messages' parts; their roles', texts' and names' characters."""
        texts, framings = self.texts, self.framings
        for message in messages:
            if isinstance(message, str):
                texts.append(message)
                framings.append(tokens.TOKENS_PER_MESSAGE + 1)  # a bare text's role is one token
            elif len(message.role) <= tokens.REMEMBERED_CHARS and len(message.name or "") <= tokens.REMEMBERED_CHARS:
                texts.append(message.text)
                framings.append(tokens.framing_tokens(message))
            else:
                for text, framing in tokens.message_parts(message):
                    texts.append(text)
                    framings.append(framing)
        return _chars_of(messages)


async def _count_parts(parts: _Parts, size: int, limit: int | None) -> PromptCount:
    """The count of the messages whose texts to count are ``parts`` and whose roles, texts and names
    hold ``size`` characters."""
    if size <= PIECE_CHARS:
        return PromptCount(await _counted_at_once(parts))
    texts, framings = parts.texts, parts.framings
    size = await in_turns.summed(_text_chars, texts)  # the characters counted below (a short role's are not)
    total = tokens.TOKENS_PER_REPLY
    counted: dict[str, int] = {}  # short ones too: thousands would overflow the remembered counts
    chars_done = 0
    index = 0  # the part being counted

    def past_limit(own: int) -> bool:  # ``own``: the tokens counted so far of the text at ``index``
        return limit is not None and total + framings[index] + own > limit

    async for text, own, chars in _each(texts, past_limit):
        total += framings[index] + own  # the framing that comes with this text
        index += 1
        chars_done += chars
        if chars == len(text):
            counted[text] = own
        if limit is not None and total > limit and chars_done < size:
            rest = size - chars_done
            return PromptCount(total + round(rest * total / max(1, chars_done)), exact=False)
    tokens.remember(counted)
    return PromptCount(total)


async def count_each(texts: Sequence[str]) -> list[int]:
    """:func:`mockserver.engine.tokens.count` of each text (no framing), letting the loop run as
    :func:`count_messages` does, and remembering the counts for the rest of the request as it does."""
    counts: list[int] = []
    counted: dict[str, int] = {}
    async for text, own, _ in _each(texts):
        counted[text] = own
        counts.append(own)
    tokens.remember(counted)
    return counts


async def _each(
    texts: Sequence[str], stop: Callable[[int], bool] = lambda own: False
) -> AsyncIterator[tuple[str, int, int]]:
    """Each text with its count and the characters counted, the loop getting its turn between the
    pieces of a long text and after a piece's worth (or :data:`MESSAGES_PER_TURN`) of short ones.
    A long text's counting stops part way once ``stop(its count so far)`` says so: fewer characters
    counted than it has."""
    since_turn = 0
    for index, text in enumerate(texts, 1):
        if len(text) <= PIECE_CHARS:
            yield text, tokens.count(text), len(text)
            since_turn += len(text)
            if since_turn >= PIECE_CHARS or index % MESSAGES_PER_TURN == 0:
                since_turn = 0
                await asyncio.sleep(0)
            continue
        own = chars = 0
        for piece in tokens.pieces(text, PIECE_CHARS):
            own += tokens.count(piece)
            chars += len(piece)
            await asyncio.sleep(0)
            if stop(own):
                break
        yield text, own, chars


def _chars_of(messages: Sequence[PromptMessage | str]) -> int:
    """The characters of the messages' roles, texts and names."""
    return sum(map(_chars, messages))


def _chars(message: PromptMessage | str) -> int:
    if isinstance(message, str):
        return len(message)
    return len(message.role) + len(message.text) + (len(message.name) if message.name else 0)


def _message_tokens(messages: Sequence[PromptMessage | str]) -> int:
    """:func:`mockserver.engine.tokens.count_messages` of ``messages`` without the reply's priming: what
    they add to a prompt's count."""
    return tokens.count_messages(messages) - tokens.TOKENS_PER_REPLY


def _text_chars(texts: Sequence[str]) -> int:
    return sum(map(len, texts))


async def _counted_at_once(parts: _Parts) -> int:
    """:func:`mockserver.engine.tokens.count_messages` of the messages' ``parts`` (their texts counted
    whole, the loop getting its turn between pieces of many parts), remembering the long texts' counts."""
    texts, framings = parts.texts, parts.framings
    counted: dict[str, int] = {}

    def tokens_of(indices: Sequence[int]) -> int:
        total = 0
        for i in indices:
            text = texts[i]
            own = tokens.count(text)
            if len(text) > tokens.REMEMBERED_CHARS:
                counted[text] = own
            total += framings[i] + own
        return total

    total = tokens.TOKENS_PER_REPLY + await in_turns.summed(tokens_of, range(len(texts)))
    if counted:
        tokens.remember(counted)
    return total
