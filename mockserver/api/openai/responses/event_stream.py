"""The typed event stream of one response (WIRE.md §5.3), paced on the plan's schedule.

Order: ``response.created`` (then ``response.queued`` for a background response) and
``response.in_progress`` at once; then, at the
first token's deadline, the reasoning item (with its summary part, whose text
deltas fall due as the last reasoning tokens); then each hosted tool's call item with its events
(:mod:`mockserver.replies.hosted_tools`); then the message (its ``url_citation`` annotations each
announced by ``response.output_text.annotation.added`` after its text) or function call
item with its deltas; then a compaction item, added and done at once, when ``context_management``
compacts (:mod:`mockserver.api.openai.responses.compaction`); and after the schedule's end
``response.completed`` (or
``response.incomplete``). ``sequence_number`` counts every event from 0, every
lifecycle event carries the same response id, and there is no ``[DONE]``.

:func:`event_items` yields each event after its deadline (see
:mod:`mockserver.engine.streaming`), encoded before the deadline is yielded; the
server's scheduler plays it.

A token that is only part of a character's bytes carries no text (:mod:`mockserver.engine.tokens`):
its deadline passes, but no delta is sent; the token that completes the character carries it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

from mockserver.api.openai import obfuscation
from mockserver.api.openai.responses.lifecycle import ReasoningPart, ResponsePlan, output_text, response_object
from mockserver.engine.pacing import Pacer
from mockserver.engine.streaming import Item, closing_items, typed_event


def numbered() -> Callable[..., dict[str, Any]]:
    """The payload maker of one stream: ``payload(kind, **fields)``, each with the next ``sequence_number``."""
    sequence = itertools.count()

    def payload(kind: str, **fields: Any) -> dict[str, Any]:
        return {"type": kind, "sequence_number": next(sequence), **fields}

    return payload


def event_items(plan: ResponsePlan, pacer: Pacer, *, per_chunk: int) -> Iterator[Item]:
    """The events of one response, each after its deadline (see the module's docstring)."""
    payload = numbered()

    def event(kind: str, **fields: Any) -> bytes:
        return typed_event(payload(kind, **fields))

    in_progress = response_object(plan, final=False, streamed=True)
    if plan.background:  # a background response is queued before it runs
        queued = response_object(plan, final=False, status="queued", streamed=True)
        yield event("response.created", response=queued)
        yield event("response.queued", response=queued)
    else:
        yield event("response.created", response=in_progress)
    yield event("response.in_progress", response=in_progress)
    pads = obfuscation.pads() if plan.obfuscate else None

    index = 0
    if plan.reasoning is not None:
        yield from _reasoning_items(plan.reasoning, index, pacer, per_chunk, event, pads)
        index += 1

    if plan.hosted:
        yield pacer.token_due(plan.reasoning_tokens)  # the hosted calls run before the answer's first token
    for hosted in plan.hosted:
        yield event("response.output_item.added", output_index=index, item=hosted.item(done=False))
        for kind, fields in hosted.call.events:
            yield event(kind, output_index=index, item_id=hosted.id, **fields)
        yield event("response.output_item.done", output_index=index, item=hosted.item())
        index += 1

    first = plan.reasoning_tokens
    for answer in plan.answers:  # the message, or each function call of a parallel call in turn
        stop = first + len(answer.text)
        yield event("response.output_item.added", output_index=index, item=answer.item("in_progress"))
        where = {"item_id": answer.id, "output_index": index}
        if answer.name is not None:
            for lo, hi, due in pacer.chunks(first, stop, per_chunk):
                yield due
                if arguments := answer.text.piece(lo - first, hi - first):
                    padded = {"obfuscation": next(pads)} if pads is not None else {}
                    yield event("response.function_call_arguments.delta", **where, delta=arguments, **padded)
            yield event("response.function_call_arguments.done", **where, arguments=answer.text.text)
        else:
            text_at = {**where, "content_index": 0}
            yield event("response.content_part.added", **text_at, part=output_text(""))
            for lo, hi, due in pacer.chunks(first, stop, per_chunk):
                yield due
                if piece := answer.text.piece(lo - first, hi - first):
                    padded = {"obfuscation": next(pads)} if pads is not None else {}
                    chosen = answer.logprobs(lo - first, hi - first)
                    yield event("response.output_text.delta", **text_at, delta=piece, logprobs=chosen, **padded)
            for number, annotation in enumerate(answer.annotations):
                yield event(
                    "response.output_text.annotation.added", **text_at, annotation_index=number, annotation=annotation
                )
            yield event("response.output_text.done", **text_at, text=answer.text.text, logprobs=answer.logprobs())
            yield event("response.content_part.done", **text_at, part=output_text(answer.text.text, answer.annotations))
        yield event("response.output_item.done", output_index=index, item=answer.item())
        index += 1
        first = stop
    if plan.compaction is not None:  # after the answer, whole at once
        yield event("response.output_item.added", output_index=index, item=plan.compaction)
        yield event("response.output_item.done", output_index=index, item=plan.compaction)

    yield pacer.end
    yield event(f"response.{plan.status}", response=response_object(plan, streamed=True))


def _reasoning_items(
    part: ReasoningPart,
    index: int,
    pacer: Pacer,
    per_chunk: int,
    event: Callable[..., bytes],
    pads: Iterator[str] | None,
) -> Iterator[Item]:
    """The reasoning item at ``output_index`` ``index``: added at the first token's deadline, its summary
    part's text deltas as the last reasoning tokens fall due, done with the last of them.

    The item's ``added`` event is encoded once its deadline (the first token's) has been yielded, not
    before as the frames after it are: the scheduler pulls a stream as it opens, while the other requests
    of a burst wait for their heads, and the event goes out in the first token's tick all the same."""
    yield pacer.token_due(0)
    yield event("response.output_item.added", output_index=index, item={**part.item(), "summary": []})
    if part.summary:
        where = {"item_id": part.id, "output_index": index, "summary_index": 0}
        start = part.hidden_tokens
        opened = event("response.reasoning_summary_part.added", **where, part={"type": "summary_text", "text": ""})
        yield pacer.token_due(start)
        yield opened
        for lo, hi, due in pacer.chunks(start, part.tokens, per_chunk):
            yield due
            if summary_piece := part.summary.piece(lo - start, hi - start):
                padded = {"obfuscation": next(pads)} if pads is not None else {}
                yield event("response.reasoning_summary_text.delta", **where, delta=summary_piece, **padded)
        text = part.summary.text
        yield event("response.reasoning_summary_text.done", **where, text=text)
        done_part = {"type": "summary_text", "text": text}
        extra = {"status": "incomplete"} if part.summary_cut else {}
        yield event("response.reasoning_summary_part.done", **where, part=done_part, **extra)
    yield pacer.token_due(max(part.tokens - 1, 0))
    yield event("response.output_item.done", output_index=index, item=part.item())


def event_source(
    plan: ResponsePlan, *, per_chunk: int, cancelled: Callable[[], bool] | None = None
) -> Callable[[Pacer], Iterator[Item]]:
    """The events of one response, as :func:`mockserver.api.serving.respond` takes them. A background
    response's stream stops where the response is cancelled (``cancelled()`` turns true)."""

    def events(pacer: Pacer) -> Iterator[Item]:
        stream = event_items(plan, pacer, per_chunk=per_chunk)
        return stream if cancelled is None else until_cancelled(stream, cancelled)

    return events


def until_cancelled(events: Iterator[Item], cancelled: Callable[[], bool]) -> Iterator[Item]:
    """A background stream stops where its response is cancelled: no further events, and no
    ``response.completed``, so the stream agrees with the stored response's ``cancelled`` status."""
    with closing_items(events):
        for item in events:
            if isinstance(item, bytes) and cancelled():
                return
            yield item
