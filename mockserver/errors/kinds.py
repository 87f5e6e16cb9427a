"""The kinds of API error: one class per HTTP status and error ``type``, and the one rendering of any of them.

Every error a client can meet is raised as a :class:`MockAPIError` subclass and rendered by
:func:`error_body` into ``{"error": {message, type, param, code}}``. The constructors with the
live API's wording, in :mod:`mockserver.errors`, build these; import them from there.
"""

from __future__ import annotations

from typing import Any


class MockAPIError(Exception):
    """Base class. Subclasses fix the HTTP status and the error ``type``."""

    status_code: int = 500
    type: str = "server_error"
    default_message: str = "The server had an error while processing your request. Sorry about that!"

    def __init__(
        self,
        message: str | None = None,
        *,
        param: str | None = None,
        code: str | None = None,
        type: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.message = message or self.default_message
        self.param = param
        self.code = code
        if type is not None:
            self.type = type
        self.headers: dict[str, str] = dict(headers or {})
        super().__init__(self.message)

    def to_dict(self) -> dict[str, Any]:
        return {"message": self.message, "type": self.type, "param": self.param, "code": self.code}


def error_body(error: MockAPIError) -> dict[str, Any]:
    """The single rendering of any error into the body the SDKs expect."""
    return {"error": error.to_dict()}


class InvalidRequestError(MockAPIError):
    status_code = 400
    type = "invalid_request_error"
    default_message = "Invalid request."


class AuthenticationError(MockAPIError):
    status_code = 401
    type = "invalid_request_error"


class PermissionDeniedError(MockAPIError):
    status_code = 403
    type = "invalid_request_error"


class NotFoundError(MockAPIError):
    status_code = 404
    type = "invalid_request_error"


class ConflictError(MockAPIError):
    status_code = 409
    type = "invalid_request_error"


class RateLimitError(MockAPIError):
    status_code = 429
    type = "requests"


class RequestTooLargeError(MockAPIError):
    status_code = 413
    type = "invalid_request_error"


class InternalServerError(MockAPIError):
    status_code = 500
    type = "server_error"


class ServiceUnavailableError(MockAPIError):
    status_code = 503
    type = "server_error"
    default_message = "The engine is currently overloaded, please try again later"


class GatewayTimeoutError(MockAPIError):
    status_code = 504
    type = "server_error"
