"""The errors only Anthropic's API has, with its wording.

Every error a request that speaks Anthropic's API meets is rendered in Anthropic's shape by its
dialect (:meth:`mockserver.engine.dialects.AnthropicDialect.error_body`, with the wording of
:mod:`mockserver.errors.anthropic`); these are the refusals OpenAI's API has no words for.
"""

from __future__ import annotations

from typing import Any

from mockserver import errors


def missing_api_key() -> errors.AuthenticationError:
    return errors.AuthenticationError("x-api-key header is required")


def invalid_api_key() -> errors.AuthenticationError:
    return errors.AuthenticationError("invalid x-api-key", code="invalid_api_key")


def missing_version() -> errors.InvalidRequestError:
    return errors.InvalidRequestError("anthropic-version: header is required")


def invalid_request(message: str) -> errors.InvalidRequestError:
    return errors.InvalidRequestError(message)


class BodyWording:
    """How Anthropic's API refuses a body it cannot read (:func:`mockserver.api.handler_inputs.parse_body`):
    a 400 whose message names the field as the live API does (``max_tokens: Field required``)."""

    def not_json(self, error: errors.MockAPIError) -> errors.MockAPIError:
        if error.code == "json_too_deep":
            return error
        return invalid_request("There was an issue with the formatting or content of your request: not valid JSON.")

    def empty(self) -> errors.MockAPIError:
        return self.not_an_object()

    def not_an_object(self) -> errors.MockAPIError:
        return invalid_request("The request body must be a JSON object.")

    def invalid(self, problems: list[dict[str, Any]]) -> errors.MockAPIError:
        first = problems[0]
        where = ".".join(str(part) for part in first["loc"] if not _is_union_tag(part))
        return invalid_request(f"{where}: {first['msg']}" if where else first["msg"])


def _is_union_tag(part: Any) -> bool:
    return isinstance(part, str) and ("[" in part or part in {"str", "list", "dict"})


BODY_WORDING = BodyWording()
