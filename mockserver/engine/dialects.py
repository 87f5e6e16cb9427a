"""How each API family frames its event stream: one :class:`Dialect` object per family.

A stream's dialect is chosen once, by the route that serves it (Chat Completions, the Responses
API, Anthropic's Messages API), and carried along on the exchange and on the open stream. The
scheduler, the faults and a stopping server ask it about the stream's events instead of looking at
the request's path:

- :meth:`Dialect.is_token_event`: a chat ``delta`` with content, tool-call arguments or a refusal;
  a Responses ``*.delta`` event; Anthropic's ``content_block_delta``. Faults fire "after N token
  events", and the metrics note when the first one went out;
- :meth:`Dialect.is_terminal_event`: chat ``data: [DONE]``; Responses ``response.completed`` /
  ``.incomplete`` / ``.failed``; Anthropic's ``message_stop``;
- :meth:`Dialect.fault_event`: the error event a fault sends for a code, in the family's words
  (WIRE.md §8.4); :meth:`Dialect.shutdown_event` and :meth:`Dialect.time_limit_event`: the last
  event of a stream the server ends (it is stopping, or the reply ran past its time limit);
- :meth:`Dialect.error_status` and :meth:`Dialect.error_body`: an error reply's status and body. Every
  OpenAI route answers ``{"error": {message, type, param, code}}`` (:func:`mockserver.errors.error_body`);
  Anthropic's API answers its own shape and words (:mod:`mockserver.errors.anthropic`).

The middleware labels every request with its family's dialect as it arrives (Anthropic's, or Chat's
for OpenAI's routes, whose errors all look alike), so an error met before any route ran is in the
right shape too; the route that serves the request then sets its own (Responses, for instance).

Chat's errors are ``data: {"error": {...}}``, which both SDKs raise as ``APIError``. The Responses
API's are the documented ``event: error`` with flat fields, which the SDKs yield as an event (a
fault's ``nested`` form puts them under ``error``, as the live API is reported to, and the SDKs raise
it). Anthropic's are ``event: error`` with ``{"type": "error", "error": {"type", "message"}}``, which
the ``anthropic`` SDKs raise as ``APIStatusError``.
"""

from __future__ import annotations

from typing import Any, Literal

from mockserver import errors
from mockserver.config.fixture import ModelAPI
from mockserver.engine.stopping import SHUTDOWN_CODE, SHUTDOWN_MESSAGE, TIME_LIMIT_CODE, time_limit_message
from mockserver.engine.streaming import DONE, data_event, typed_event
from mockserver.errors import anthropic as anthropic_errors

DialectName = Literal["chat", "responses", "anthropic"]
ErrorForm = Literal["flat", "nested"]

OTHER_STREAM_ERROR = "An error occurred during streaming."

# A fault's error code: the error type and message the stream's error event says, per family.
OPENAI_FAULT_ERRORS = {
    "server_error": ("server_error", "The server had an error while processing your request. Sorry about that!"),
    "rate_limit_exceeded": ("requests", "Rate limit reached. Please try again later."),
    "too_many_requests": ("too_many_requests", "Too Many Requests"),
    "server_is_overloaded": ("service_unavailable_error", "Model temporarily overloaded"),
}
ANTHROPIC_FAULT_ERRORS = {
    "server_error": ("api_error", "Internal server error"),
    "rate_limit_exceeded": ("rate_limit_error", "Rate limit exceeded. Please try again later."),
    "too_many_requests": ("rate_limit_error", "Too Many Requests"),
    "server_is_overloaded": ("overloaded_error", "Overloaded"),
    "overloaded": ("overloaded_error", "Overloaded"),
}


class Dialect:
    """The framing of one API family's event stream. Subclasses say what differs."""

    name: DialectName
    api: ModelAPI = "openai"  # the family of models it serves
    typed = False  # events carry an ``event:`` line

    def is_token_event(self, event: bytes) -> bool:
        raise NotImplementedError

    def is_terminal_event(self, event: bytes) -> bool:
        raise NotImplementedError

    def fault_event(self, code: str | None, sequence_number: int, form: ErrorForm = "flat") -> bytes:
        """The error event a fault ends the stream with: ``code``'s type and message, as the family says them."""
        raise NotImplementedError

    def server_error_event(self, code: str, message: str, sequence_number: int) -> bytes:
        """A server error that ends the stream (``sequence_number`` events were sent before it)."""
        raise NotImplementedError

    def shutdown_event(self, sequence_number: int) -> bytes:
        """The last event of a stream the server ends because it is stopping (WIRE.md §8.4)."""
        return self.server_error_event(SHUTDOWN_CODE, SHUTDOWN_MESSAGE, sequence_number)

    def time_limit_event(self, sequence_number: int, limit_s: float) -> bytes:
        """The last event of a stream that reached the wall-clock limit on one reply."""
        return self.server_error_event(TIME_LIMIT_CODE, time_limit_message(limit_s), sequence_number)

    def reset_event(self, sequence_number: int) -> bytes:
        """The last event of a stream that ``POST /_mock/reset`` ends: the ``server_reset`` error that a
        held non-streaming reply answers as a 503."""
        reset = errors.server_reset()
        return self.server_error_event(reset.code or "server_reset", reset.message, sequence_number)

    def error_status(self, error: errors.MockAPIError) -> int:
        """The HTTP status the family answers ``error`` with."""
        return error.status_code

    def error_body(self, error: errors.MockAPIError, request_id: str) -> dict[str, Any]:
        """The body of the HTTP reply to ``error`` (``request_id``: the request's ``x-request-id``)."""
        return errors.error_body(error)

    def __repr__(self) -> str:
        return f"<{self.name} dialect>"


class ChatDialect(Dialect):
    """Chat Completions: ``data:`` lines only, ending with ``data: [DONE]``."""

    name: DialectName = "chat"
    TOKEN_MARKERS = (b'"delta":{"content":', b'"delta":{"tool_calls":', b'"delta":{"refusal":')

    def is_token_event(self, event: bytes) -> bool:
        return any(marker in event for marker in self.TOKEN_MARKERS)

    def is_terminal_event(self, event: bytes) -> bool:
        return event == DONE

    def fault_event(self, code: str | None, sequence_number: int, form: ErrorForm = "flat") -> bytes:
        code = code or "server_error"
        kind, message = OPENAI_FAULT_ERRORS.get(code, ("server_error", OTHER_STREAM_ERROR))
        return data_event({"error": {"message": message, "type": kind, "param": None, "code": code}})

    def server_error_event(self, code: str, message: str, sequence_number: int) -> bytes:
        return data_event({"error": {"message": message, "type": "server_error", "param": None, "code": code}})


class ResponsesDialect(Dialect):
    """The Responses API: typed events (``event:`` lines) with sequence numbers."""

    name: DialectName = "responses"
    typed = True
    TERMINAL = (b"event: response.completed\n", b"event: response.incomplete\n", b"event: response.failed\n")

    def is_token_event(self, event: bytes) -> bool:
        line = event.split(b"\n", 1)[0]
        return line.startswith(b"event: ") and line.endswith(b".delta")

    def is_terminal_event(self, event: bytes) -> bool:
        return event.startswith(self.TERMINAL)

    def fault_event(self, code: str | None, sequence_number: int, form: ErrorForm = "flat") -> bytes:
        code = code or "server_error"
        kind, message = OPENAI_FAULT_ERRORS.get(code, ("server_error", OTHER_STREAM_ERROR))
        if form == "nested":
            inner = {"type": kind, "code": code, "message": message, "param": None}
            return typed_event({"type": "error", "sequence_number": sequence_number, "error": inner})
        return self.server_error_event(code, message, sequence_number)

    def server_error_event(self, code: str, message: str, sequence_number: int) -> bytes:
        return typed_event(
            {"type": "error", "sequence_number": sequence_number, "code": code, "message": message, "param": None}
        )


class AnthropicDialect(Dialect):
    """Anthropic's Messages API: typed events, ``content_block_delta`` per token, ``message_stop`` at the end."""

    name: DialectName = "anthropic"
    api: ModelAPI = "anthropic"
    typed = True
    TOKEN = b"event: content_block_delta\n"
    TERMINAL = b"event: message_stop\n"

    def is_token_event(self, event: bytes) -> bool:
        return event.startswith(self.TOKEN)

    def is_terminal_event(self, event: bytes) -> bool:
        return event.startswith(self.TERMINAL)

    def fault_event(self, code: str | None, sequence_number: int, form: ErrorForm = "flat") -> bytes:
        kind, message = ANTHROPIC_FAULT_ERRORS.get(code or "server_error", ("api_error", OTHER_STREAM_ERROR))
        return self.error_event(kind, message)

    def server_error_event(self, code: str, message: str, sequence_number: int) -> bytes:
        # The SDKs raise it as APIStatusError, retryable: a server that stops is overloaded, for Anthropic.
        return self.error_event("overloaded_error", message)

    def error_status(self, error: errors.MockAPIError) -> int:
        return anthropic_errors.translate(error)[0]

    def error_body(self, error: errors.MockAPIError, request_id: str) -> dict[str, Any]:
        return anthropic_errors.error_body(error, request_id)

    @staticmethod
    def error_event(kind: str, message: str) -> bytes:
        return typed_event({"type": "error", "error": {"type": kind, "message": message}})


CHAT = ChatDialect()
RESPONSES = ResponsesDialect()
ANTHROPIC = AnthropicDialect()
