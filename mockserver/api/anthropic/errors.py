"""The errors only Anthropic's API has, with its wording.

Every error a request that speaks Anthropic's API meets is rendered in Anthropic's shape by its
dialect (:meth:`mockserver.engine.dialects.AnthropicDialect.error_body`, with the wording of
:mod:`mockserver.errors.anthropic`); these are the refusals OpenAI's API has no words for.
"""

from __future__ import annotations

from mockserver import errors


def missing_api_key() -> errors.AuthenticationError:
    return errors.AuthenticationError("x-api-key header is required")


def invalid_api_key() -> errors.AuthenticationError:
    return errors.AuthenticationError("invalid x-api-key", code="invalid_api_key")


def missing_version() -> errors.InvalidRequestError:
    return errors.InvalidRequestError("anthropic-version: header is required")


def invalid_request(message: str) -> errors.InvalidRequestError:
    return errors.InvalidRequestError(message)
