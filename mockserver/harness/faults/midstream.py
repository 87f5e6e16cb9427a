"""Faults inside a stream: error events, dropped connections, stalls and truncation.

The wrapper works on the encoded SSE events of every API, so Chat Completions, the
Responses API and Anthropic's Messages API get the same faults. It only needs to know three things
about an event, read from its bytes:

- is it a *token event* (a chat ``delta`` with content, tool-call arguments or a
  refusal; a Responses ``*.delta`` event)? Faults fire "after N token events";
- is it the *terminal* event (chat ``data: [DONE]``; Responses
  ``response.completed`` / ``.incomplete`` / ``.failed``)? A fault whose N was never
  reached fires there instead, so the client never sees a clean end;
- which framing to use for an error event.

The stream's :class:`~mockserver.engine.dialects.Dialect` answers all three, for its API family
(Chat Completions, the Responses API, Anthropic's Messages API).

A faulted stream is paced by :class:`FaultPacer`, which never merges tokens into
one chunk. At time scale 0 every token is due at once, and a normal stream sends
the whole text in one event; a faulted one still sends one event per token, so
"drop after 5 tokens" means 5 tokens.

The wrapper is a plain iterator over the stream's items (see
:mod:`mockserver.engine.streaming`): a stall is a deadline, a drop the ``DROP``
signal, and the server's stream scheduler carries them out.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import replace

from mockserver.config.faults import FaultSpec
from mockserver.engine.dialects import Dialect
from mockserver.engine.pacing import Pacer
from mockserver.engine.streaming import DROP, Item, closing_items


class FaultPacer(Pacer):
    """A :class:`Pacer` that sends one chunk per ``per_chunk`` tokens even when all are due, and can be pushed back."""

    merges_when_due = False
    fixed = False  # shift() moves the schedule mid-stream: deadlines are read as they come

    def shift(self, seconds: float) -> None:
        """Move every deadline later, so a stream resumes at its rate after a stall instead of bursting."""
        if seconds > 0:
            self.schedule = replace(self.schedule, start=self.schedule.start + seconds)


def with_fault(source: Iterator[Item], spec: FaultSpec, *, dialect: Dialect, pacer: FaultPacer) -> Iterator[Item]:
    """Pass ``source``'s items through, injecting ``spec`` at its point.

    A stall is a deadline ``stall_ms`` from now (or never, for ``stall``: the stream then
    ends only when the client leaves); the pacer is pushed back by the time it lasted. A
    drop is :data:`~mockserver.engine.streaming.DROP`, after the events before it.
    """
    ending_after = _ending_after(spec)
    stall_after = spec.stall_after if spec.stalls else None
    stall_seconds = None if spec.stall else (spec.stall_ms or 0) / 1000
    clock = pacer.clock
    tokens = sent = 0

    def stall() -> Iterator[Item]:
        before = clock.now()
        yield math.inf if stall_seconds is None else before + stall_seconds
        pacer.shift(clock.now() - before)

    with closing_items(source):
        if stall_after == -1:
            yield from stall()
        for item in source:
            if not isinstance(item, bytes):
                yield item
                continue
            token = dialect.is_token_event(item)
            terminal = dialect.is_terminal_event(item)
            if stall_after is not None and stall_after >= 0 and ((token and tokens == stall_after) or terminal):
                stall_after = None
                yield from stall()
            if terminal and spec.truncate is True:
                return
            if ending_after is not None and ((token and tokens >= ending_after) or terminal):
                if spec.error_event_after is not None:
                    yield dialect.fault_event(spec.code, sent, spec.error_form)
                elif spec.drop_after is not None:
                    yield DROP
                return
            yield item
            sent += 1
            tokens += token


def _ending_after(spec: FaultSpec) -> int | None:
    """After how many token events the stream ends (by error, drop or truncation), if it does."""
    if spec.error_event_after is not None:
        return spec.error_event_after
    if spec.drop_after is not None:
        return spec.drop_after
    if spec.truncate is not True and isinstance(spec.truncate, int) and spec.truncate is not False:
        return spec.truncate
    return None
