"""Faults inside a stream: error events, dropped connections, stalls and truncation.

The wrapper works on the encoded SSE events of either API, so Chat Completions
and the Responses API get the same faults. It only needs to know three things
about an event, read from its bytes:

- is it a *token event* (a chat ``delta`` with content, tool-call arguments or a
  refusal; a Responses ``*.delta`` event)? Faults fire "after N token events";
- is it the *terminal* event (chat ``data: [DONE]``; Responses
  ``response.completed`` / ``.incomplete`` / ``.failed``)? A fault whose N was never
  reached fires there instead, so the client never sees a clean end;
- which framing to use for an error event: the path (``/v1/responses...``, ``/v1/messages``) decides.

Anthropic's Messages stream: token events are ``content_block_delta``, the terminal event is
``message_stop``, and the error event is ``event: error`` with ``{"type": "error", "error":
{"type", "message"}}``, which the ``anthropic`` SDKs raise as ``APIStatusError``.

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
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace

from mockserver.config.faults import FaultSpec
from mockserver.engine.pacing import Pacer
from mockserver.engine.streaming import DONE, DROP, Item, closing_items, data_event, typed_event

RESPONSES_PATH = "/v1/responses"
MESSAGES_PATH = "/v1/messages"
_ANTHROPIC_TOKEN = b"event: content_block_delta\n"
_ANTHROPIC_TERMINAL = b"event: message_stop\n"
ANTHROPIC_ERROR_EVENTS = {
    "server_error": ("api_error", "Internal server error"),
    "rate_limit_exceeded": ("rate_limit_error", "Rate limit exceeded. Please try again later."),
    "too_many_requests": ("rate_limit_error", "Too Many Requests"),
    "server_is_overloaded": ("overloaded_error", "Overloaded"),
    "overloaded": ("overloaded_error", "Overloaded"),
}
_CHAT_TOKEN_MARKERS = (b'"delta":{"content":', b'"delta":{"tool_calls":', b'"delta":{"refusal":')
_RESPONSES_TERMINAL = (b"event: response.completed\n", b"event: response.incomplete\n", b"event: response.failed\n")
ERROR_EVENT_MESSAGES = {
    "server_error": ("server_error", "The server had an error while processing your request. Sorry about that!"),
    "rate_limit_exceeded": ("requests", "Rate limit reached. Please try again later."),
    "too_many_requests": ("too_many_requests", "Too Many Requests"),
    "server_is_overloaded": ("service_unavailable_error", "Model temporarily overloaded"),
}


def is_responses(path: str) -> bool:
    return path == RESPONSES_PATH or path.startswith(RESPONSES_PATH + "/")


def is_anthropic(path: str) -> bool:
    return path == MESSAGES_PATH


def is_token_event(event: bytes, responses: bool, anthropic: bool = False) -> bool:
    if anthropic:
        return event.startswith(_ANTHROPIC_TOKEN)
    if responses:
        line = event.split(b"\n", 1)[0]
        return line.startswith(b"event: ") and line.endswith(b".delta")
    return any(marker in event for marker in _CHAT_TOKEN_MARKERS)


def is_terminal_event(event: bytes, responses: bool, anthropic: bool = False) -> bool:
    if anthropic:
        return event.startswith(_ANTHROPIC_TERMINAL)
    if responses:
        return event.startswith(_RESPONSES_TERMINAL)
    return event == DONE


def error_event(
    responses: bool, sequence_number: int, code: str | None = None, form: str = "flat", anthropic: bool = False
) -> bytes:
    """An error inside a stream (WIRE.md §8.4).

    Chat: ``data: {"error": {...}}``, which both SDKs raise as ``APIError``.
    Responses, ``flat`` (documented): ``event: error`` with ``type``, ``code``,
    ``message``, ``param``; the SDKs yield it as an event. Responses, ``nested``
    (what the live API is reported to send): the fields under ``error``, which the
    SDKs raise as ``APIError``.
    """
    code = code or "server_error"
    if anthropic:
        kind, message = ANTHROPIC_ERROR_EVENTS.get(code, ("api_error", "An error occurred during streaming."))
        return typed_event({"type": "error", "error": {"type": kind, "message": message}})
    kind, message = ERROR_EVENT_MESSAGES.get(code, ("server_error", "An error occurred during streaming."))
    if not responses:
        return data_event({"error": {"message": message, "type": kind, "param": None, "code": code}})
    if form == "nested":
        inner = {"type": kind, "code": code, "message": message, "param": None}
        return typed_event({"type": "error", "sequence_number": sequence_number, "error": inner})
    return typed_event(
        {"type": "error", "sequence_number": sequence_number, "code": code, "message": message, "param": None}
    )


class FaultPacer(Pacer):
    """A :class:`Pacer` that sends one chunk per ``per_chunk`` tokens even when all are due, and can be pushed back."""

    merges_when_due = False
    fixed = False  # shift() moves the schedule mid-stream: deadlines are read as they come

    async def batches(self, first: int, stop: int, per_chunk: int = 1) -> AsyncIterator[tuple[int, int]]:
        sent = first
        while sent < stop:
            target = min(sent + per_chunk, stop)
            await self.clock.sleep_until(self.schedule.due_at(target - 1))
            yield sent, target
            sent = target

    def shift(self, seconds: float) -> None:
        """Move every deadline later, so a stream resumes at its rate after a stall instead of bursting."""
        if seconds > 0:
            self.schedule = replace(self.schedule, start=self.schedule.start + seconds)


def with_fault(
    source: Iterator[Item], spec: FaultSpec, *, responses: bool, pacer: FaultPacer, anthropic: bool = False
) -> Iterator[Item]:
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
            token = is_token_event(item, responses, anthropic)
            terminal = is_terminal_event(item, responses, anthropic)
            if stall_after is not None and stall_after >= 0 and ((token and tokens == stall_after) or terminal):
                stall_after = None
                yield from stall()
            if terminal and spec.truncate is True:
                return
            if ending_after is not None and ((token and tokens >= ending_after) or terminal):
                if spec.error_event_after is not None:
                    yield error_event(responses, sent, spec.code, spec.error_form, anthropic)
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
