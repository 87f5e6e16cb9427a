"""Errors in Anthropic's shape: ``{"type": "error", "error": {"type", "message"}, "request_id"}``.

The package raises its typed errors (:mod:`mockserver.errors`) with OpenAI's wording; a request
that speaks Anthropic's API gets them rendered here instead, by
:meth:`mockserver.engine.dialects.AnthropicDialect.error_body`: the ``type`` follows the HTTP status
as Anthropic's API documents it, and the errors a client meets most are reworded as Anthropic
words them. Retry headers (``retry-after``, ``x-should-retry``) pass through unchanged, which is
what the ``anthropic`` SDKs read.

===========  ========================  ==========================================
status       ``error.type``            SDK exception
===========  ========================  ==========================================
400          ``invalid_request_error``  ``BadRequestError``
401          ``authentication_error``   ``AuthenticationError``
402          ``billing_error``          ``APIStatusError``
403          ``permission_error``       ``PermissionDeniedError``
404          ``not_found_error``        ``NotFoundError``
413          ``request_too_large``      ``RequestTooLargeError``
429          ``rate_limit_error``       ``RateLimitError`` (retried, after ``retry-after``)
500          ``api_error``              ``InternalServerError`` (retried)
503, 529     ``overloaded_error``       ``ServiceUnavailableError``, ``OverloadedError`` (retried)
===========  ========================  ==========================================
"""

from __future__ import annotations

import re
from typing import Any

from mockserver.errors import InternalServerError, MockAPIError

TYPE_FOR_STATUS = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    409: "conflict_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    503: "overloaded_error",
    504: "timeout_error",
    529: "overloaded_error",
}
RATE_LIMITS_URL = "https://docs.claude.com/en/api/rate-limits"
LOW_CREDIT = (
    "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or "
    "purchase credits."
)
_MODEL_IN_MESSAGE = re.compile(r"model `([^`]*)`")
_VISIT = re.compile(r"Visit https://\S+ to learn more\.")


def error_type(status: int) -> str:
    return TYPE_FOR_STATUS.get(status, "api_error" if status >= 500 else "invalid_request_error")


def translate(error: MockAPIError) -> tuple[int, str]:
    """The status and message Anthropic's API answers with for the same refusal."""
    status, message, code = error.status_code, error.message, error.code
    model = _MODEL_IN_MESSAGE.search(message)
    if code in ("invalid_api_key", "account_deactivated"):
        return status, "invalid x-api-key"
    if code == "insufficient_quota":
        return 400, LOW_CREDIT  # Anthropic answers a spent balance with a 400, which no SDK retries
    if code == "model_not_found" and model is not None:
        if status == 404:  # Anthropic's words, and the hint that may follow the OpenAI-shaped message's
            hint = message.partition(" you do not have access to it.")[2]
            return 404, f"model: {model.group(1)}.{hint}" if hint else f"model: {model.group(1)}"
        return status, f"Your API key does not have permission to use the specified model: {model.group(1)}"
    if status == 429 and code == "rate_limit_exceeded":
        return status, _VISIT.sub(f"For details, refer to: {RATE_LIMITS_URL}.", message)
    if status == 500 and message == InternalServerError.default_message:
        return status, "Internal server error"
    if status in (503, 529) and code in (None, "server_is_overloaded", "engine_overloaded"):
        return status, "Overloaded"
    if status == 404 and message.startswith("Invalid URL"):
        return status, "Not Found"
    return status, message


def error_body(error: MockAPIError, request_id: str) -> dict[str, Any]:
    """The body Anthropic's API answers ``error`` with, for the request ``request_id``."""
    status, message = translate(error)
    return {"type": "error", "error": {"type": error_type(status), "message": message}, "request_id": request_id}
