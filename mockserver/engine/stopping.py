"""Ending the streams in flight when the server stops: the final event each one gets.

Every open stream is in the server's
:class:`~mockserver.engine.scheduler.StreamScheduler`. When a stopping server's grace
period is over, :meth:`~mockserver.engine.scheduler.StreamScheduler.end_all` ends each
of them cleanly: one OpenAI-shaped error event (:func:`shutdown_event`), then the end of
the body. Each stream's producer is closed, so its ``finally`` blocks run: its capacity
slot is given back and the journal records the exchange. A stream that opens after that
gets the same event at once. (Held non-streaming replies have their own registry,
:mod:`mockserver.service.inflight`.) Call it on the server's event loop.
"""

from __future__ import annotations

from mockserver import errors
from mockserver.engine.streaming import data_event, typed_event

SHUTDOWN_CODE = "server_shutting_down"
SHUTDOWN_MESSAGE = "The server is shutting down and could not finish this reply. Please retry the request."


TIME_LIMIT_CODE = "reply_time_limit"
ANTHROPIC_MESSAGES_PATH = "/v1/messages"  # its streams end with Anthropic's error event


def time_limit_message(limit_s: float) -> str:
    return (
        f"This reply took longer than the server's limit of {limit_s:g} s per reply "
        "(max_reply_seconds, MOCKSERVER_MAX_REPLY_SECONDS). Lower time_scale or raise the limit."
    )


def time_limit_event(responses: bool, sequence_number: int, limit_s: float, path: str = "") -> bytes:
    """The last event of a stream that reached the wall-clock limit on one reply."""
    return error_event(responses, sequence_number, time_limit_message(limit_s), TIME_LIMIT_CODE, path)


def error_event(responses: bool, sequence_number: int, message: str, code: str, path: str = "") -> bytes:
    """A server error that ends a stream, framed for its API (as :func:`shutdown_event`)."""
    if path == ANTHROPIC_MESSAGES_PATH:
        return anthropic_error_event(message)
    if not responses:
        return data_event({"error": {"message": message, "type": "server_error", "param": None, "code": code}})
    return typed_event(
        {"type": "error", "sequence_number": sequence_number, "code": code, "message": message, "param": None}
    )


def reset_event(responses: bool, sequence_number: int, path: str = "") -> bytes:
    """The last event of a stream that ``POST /_mock/reset`` ends: the ``server_reset`` error that a
    held non-streaming reply answers as a 503, framed for its API (as :func:`shutdown_event`)."""
    reset = errors.server_reset()
    return error_event(responses, sequence_number, reset.message, reset.code or "server_reset", path)


def anthropic_error_event(message: str) -> bytes:
    """Anthropic's ``event: error``, which the ``anthropic`` SDKs raise as ``APIStatusError`` (retryable)."""
    return typed_event({"type": "error", "error": {"type": "overloaded_error", "message": message}})


def shutdown_event(responses: bool, sequence_number: int, path: str = "") -> bytes:
    """The last event of a stream the server ends because it is stopping (WIRE.md §8.4).

    Chat Completions: ``data: {"error": {...}}``, which both SDKs raise as ``APIError``.
    Responses API: the documented ``event: error`` with flat fields, which the SDKs yield.
    Anthropic's Messages API (``path``): :func:`anthropic_error_event`.
    """
    if path == ANTHROPIC_MESSAGES_PATH:
        return anthropic_error_event(SHUTDOWN_MESSAGE)
    if not responses:
        return data_event(
            {"error": {"message": SHUTDOWN_MESSAGE, "type": "server_error", "param": None, "code": SHUTDOWN_CODE}}
        )
    return typed_event(
        {
            "type": "error",
            "sequence_number": sequence_number,
            "code": SHUTDOWN_CODE,
            "message": SHUTDOWN_MESSAGE,
            "param": None,
        }
    )
