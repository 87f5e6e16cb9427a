"""OpenAI-shaped errors: one class per API error, one rendering path.

Every error a client can meet is raised as a :class:`MockAPIError` subclass and
rendered by :func:`error_body` into ``{"error": {message, type, param, code}}``,
the body both official SDKs parse (WIRE.md §8). The wording follows the live API.

The bottom layer: it imports nothing of the package. :mod:`.kinds` holds the error classes and
their rendering (import them from here); :mod:`.validation` turns pydantic's problems into these
errors; :mod:`.variants` names the error bodies faults and scripts send;
:mod:`.formats` writes values as the live API does in messages and headers (masked keys, durations);
:mod:`.anthropic` renders any of these errors as Anthropic's API words and shapes them.
"""

from __future__ import annotations

from typing import Any

from mockserver.errors.formats import ceil_ms as ceil_ms
from mockserver.errors.formats import go_duration as go_duration
from mockserver.errors.formats import mask_api_key as mask_api_key
from mockserver.errors.kinds import AuthenticationError as AuthenticationError
from mockserver.errors.kinds import ConflictError as ConflictError
from mockserver.errors.kinds import GatewayTimeoutError as GatewayTimeoutError
from mockserver.errors.kinds import InternalServerError as InternalServerError
from mockserver.errors.kinds import InvalidRequestError as InvalidRequestError
from mockserver.errors.kinds import MockAPIError as MockAPIError
from mockserver.errors.kinds import NotFoundError as NotFoundError
from mockserver.errors.kinds import PermissionDeniedError as PermissionDeniedError
from mockserver.errors.kinds import RateLimitError as RateLimitError
from mockserver.errors.kinds import RequestTooLargeError as RequestTooLargeError
from mockserver.errors.kinds import ServiceUnavailableError as ServiceUnavailableError
from mockserver.errors.kinds import error_body as error_body

API_KEYS_URL = "https://platform.openai.com/account/api-keys"
RATE_LIMITS_URL = "https://platform.openai.com/account/rate-limits"
ERROR_CODES_URL = "https://platform.openai.com/docs/guides/error-codes/api-errors"


# -- Constructors with the live API's fixed wording -------------------------------------------


def missing_api_key() -> AuthenticationError:
    return AuthenticationError(
        "You didn't provide an API key. You need to provide your API key in an Authorization header "
        "using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank "
        "username) if you're accessing the API from your browser and are prompted for a username and "
        f"password. You can obtain an API key from {API_KEYS_URL}."
    )


def invalid_api_key(key: str) -> AuthenticationError:
    return AuthenticationError(
        f"Incorrect API key provided: {mask_api_key(key)}. You can find your API key at {API_KEYS_URL}.",
        code="invalid_api_key",
    )


def model_not_found(model: str, hint: str | None = None) -> NotFoundError:
    """The live 404; ``hint``, one sentence naming the model the caller likely meant, follows its words."""
    message = f"The model `{model}` does not exist or you do not have access to it."
    return NotFoundError(f"{message} {hint}" if hint else message, code="model_not_found")


def wrong_model_kind(model: str, kind: str) -> MockAPIError:
    """A model of another kind than the endpoint serves: an embedding model on Chat Completions
    (the live wording), a chat model on /v1/embeddings or /v1/moderations."""
    if kind == "chat":
        return NotFoundError(
            "This is not a chat model and thus not supported in the v1/chat/completions endpoint. "
            "Did you mean to use v1/completions?",
            param="model",
        )
    what = "embeddings" if kind == "embedding" else "moderations"
    return InvalidRequestError(f"The model `{model}` does not support {what}.", param="model")


def tier_not_entitled(project: str, model: str) -> PermissionDeniedError:
    """A key whose project has no Ultrafast preview access asks for ``service_tier: ultrafast``."""
    return PermissionDeniedError(
        f"Project `{project}` does not have access to the `ultrafast` service tier for model `{model}`. "
        "Ultrafast processing is in limited preview for selected customers.",
        param="service_tier",
        code="service_tier_not_available",
    )


def revoked_api_key(key: str) -> AuthenticationError:
    """A deleted (revoked) key: the live API cannot tell it from a wrong one."""
    return invalid_api_key(key)


def account_deactivated() -> AuthenticationError:
    return AuthenticationError(
        "The OpenAI account associated with this API key has been deactivated. If you are the developer for "
        "this OpenAI app, please check your email for more information. If you are seeing this error while "
        "using another app or site, please reach out to them for more help.",
        code="account_deactivated",
    )


def mismatched_organization() -> AuthenticationError:
    """The ``OpenAI-Organization`` header names another organization than the key's."""
    return AuthenticationError(
        "OpenAI-Organization header should match organization for API key", code="mismatched_organization"
    )


def mismatched_project() -> AuthenticationError:
    """The ``OpenAI-Project`` header names another project than the key's."""
    return AuthenticationError("OpenAI-Project header should match project for API key", code="mismatched_project")


def unsupported_region() -> PermissionDeniedError:
    return PermissionDeniedError(
        "Country, region, or territory not supported",
        type="request_forbidden",
        code="unsupported_country_region_territory",
    )


def project_model_access(project: str, model: str) -> PermissionDeniedError:
    """The model exists, but the key's project is not allowed to use it."""
    return PermissionDeniedError(f"Project `{project}` does not have access to model `{model}`", code="model_not_found")


def insufficient_quota() -> RateLimitError:
    """Out of credits. ``x-should-retry: false``: retrying cannot help, so the SDKs must not."""
    return RateLimitError(
        "You exceeded your current quota, please check your plan and billing details. For more "
        f"information on this error, read the docs: {ERROR_CODES_URL}.",
        type="insufficient_quota",
        code="insufficient_quota",
        headers={"x-should-retry": "false"},
    )


_LIMIT_NAMES = {"requests": "requests per min (RPM)", "tokens": "tokens per min (TPM)"}


def rate_limited(
    kind: str, model: str, organization: str, limit: int, used: int, requested: int, wait: str
) -> RateLimitError:
    """A request or token window is full. ``kind`` is ``requests`` or ``tokens``, which is also the ``type``."""
    return RateLimitError(
        f"Rate limit reached for {model} in organization {organization} on {_LIMIT_NAMES[kind]}: "
        f"Limit {limit}, Used {used}, Requested {requested}. Please try again in {wait}. "
        f"Visit {RATE_LIMITS_URL} to learn more.",
        type=kind,
        code="rate_limit_exceeded",
    )


def request_too_large(model: str, organization: str, limit: int, requested: int) -> RateLimitError:
    """The request alone needs more tokens than the per-minute limit: it can never fit."""
    return RateLimitError(
        f"Request too large for {model} in organization {organization} on tokens per min (TPM): "
        f"Limit {limit}, Requested {requested}. The input or output tokens must be reduced in order to run "
        f"successfully. Visit {RATE_LIMITS_URL} to learn more.",
        type="tokens",
        code="rate_limit_exceeded",
    )


def ultrafast_capacity(model: str, status: int, wait: str) -> MockAPIError:
    """The limited Ultrafast preview is full. Retryable: ``x-should-retry: true``."""
    message = (
        f"The ultrafast service tier is at capacity for model `{model}`. Please try again in {wait}, "
        "or send the request with service_tier 'default'."
    )
    if status == 503:
        return ServiceUnavailableError(
            message, type="service_unavailable_error", code="server_is_overloaded", param="service_tier"
        )
    return RateLimitError(message, type="requests", code="rate_limit_exceeded", param="service_tier")


STATE_RETRY_AFTER_S = 1  # how long a client is asked to wait while the shared state is unreachable


def state_unavailable(where: str, *, refused: str | None = None) -> ServiceUnavailableError:
    """The shared state (Redis) cannot be reached, or ``refused`` a call (Redis's own words).
    Retryable: the server recovers by itself once Redis does."""
    problem = "is unreachable right now" if refused is None else f"refused the call ({refused})"
    error = ServiceUnavailableError(
        f"The server's shared state ({where}) {problem}. Please retry in a moment.",
        code="state_unavailable",
    )
    error.headers.update(
        {
            "retry-after": str(STATE_RETRY_AFTER_S),
            "retry-after-ms": str(STATE_RETRY_AFTER_S * 1000),
            "x-should-retry": "true",
        }
    )
    return error


def tier_not_supported(model: str, tier: str, supported: list[str]) -> InvalidRequestError:
    return InvalidRequestError(
        f"The service tier '{tier}' is not supported for model `{model}`. "
        f"Supported values are: {_quote_list(supported)}.",
        param="service_tier",
        code="invalid_value",
    )


def invalid_value(param: str, value: Any, supported: list[str]) -> InvalidRequestError:
    return InvalidRequestError(
        f"Invalid value: '{value}'. Supported values are: {_quote_list(supported)}.",
        param=param,
        code="invalid_value",
    )


def missing_parameter(param: str) -> InvalidRequestError:
    return InvalidRequestError(
        f"Missing required parameter: '{param}'.", param=param, code="missing_required_parameter"
    )


def describe(value: Any) -> str:
    """What kind of JSON value ``value`` is, as the live API words it in an ``invalid_type`` error."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a decimal"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return "null"


def invalid_type(param: str, expected: str, got: str) -> InvalidRequestError:
    return InvalidRequestError(
        f"Invalid type for '{param}': expected {expected}, but got {got} instead.",
        param=param,
        code="invalid_type",
    )


def output_limit_too_large(param: str, value: int, most: int) -> InvalidRequestError:
    """``max_tokens`` / ``max_completion_tokens`` / ``max_output_tokens`` above the model's output cap."""
    return InvalidRequestError(
        f"{param} is too large: {value}. This model supports at most {most} completion tokens, "
        f"whereas you provided {value}.",
        param=param,
        code="invalid_value",
    )


def request_output_too_large(choices: int, per_choice: int, most: int, limit_param: str) -> InvalidRequestError:
    """``n`` choices of this length would produce more than one request may (a mock-only guard)."""
    return InvalidRequestError(
        f"Invalid 'n': {choices} choices of up to {per_choice} output tokens each is {choices * per_choice} tokens, "
        f"more than the {most} output tokens this server produces for one request. "
        f"Lower 'n' or '{limit_param}'.",
        param="n",
        code="invalid_value",
    )


def stream_options_without_stream() -> InvalidRequestError:
    return InvalidRequestError(
        "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
        param="stream_options",
        code="invalid_value",
    )


def tool_message_without_tool_calls(index: int) -> InvalidRequestError:
    """A ``tool`` message that follows no assistant message with ``tool_calls`` (the live API misspells it)."""
    return InvalidRequestError(
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
        param=f"messages[{index}].role",
    )


def tool_call_id_missing(index: int) -> InvalidRequestError:
    return InvalidRequestError(
        "Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'.",
        param=f"messages[{index}].tool_call_id",
    )


def tool_call_id_not_found(index: int, tool_call_id: str) -> InvalidRequestError:
    return InvalidRequestError(
        f"Invalid parameter: 'tool_call_id' of '{tool_call_id}' not found in 'tool_calls' of previous message.",
        param=f"messages[{index}].tool_call_id",
    )


def tool_calls_unanswered(index: int, call_ids: list[str]) -> InvalidRequestError:
    return InvalidRequestError(
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
        f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(call_ids)}",
        param=f"messages[{index}].role",
    )


def cannot_cancel_synchronous() -> InvalidRequestError:
    """``POST /v1/responses/{id}/cancel`` on a response not created with ``background: true``."""
    return InvalidRequestError("Cannot cancel a synchronous response.")


def background_without_store() -> InvalidRequestError:
    """``background: true`` with ``store: false``: nothing could be polled or cancelled."""
    return InvalidRequestError("Background responses require 'store' to be true.", param="store", code="invalid_value")


def config_conflict(reason: str) -> ConflictError:
    """A ``PATCH /_mock/config`` that another process's patch, landed first, made invalid (or kept racing)."""
    return ConflictError(
        "Another PATCH /_mock/config changed the configuration while this one was being applied, and this "
        f"patch does not apply to the configuration now in force: {reason} Read GET /_mock/config and "
        "send the patch again against it.",
        code="config_conflict",
    )


def speed_check_running(generation_s: float) -> ConflictError:
    """``POST /_mock/speed-check`` while this server's check is still measuring."""
    return ConflictError(
        "A speed check is already running on this server; the dashboard shows its figures as they come in. "
        f"Start another once it has finished (it takes about {generation_s:g} seconds plus the slowest time to "
        "first token).",
        code="speed_check_running",
    )


def nothing_to_speed_check() -> ConflictError:
    """``POST /_mock/speed-check`` with no model and key to measure in the configuration in force."""
    return ConflictError(
        "There is nothing to check: the speed check needs an OpenAI model without a forced tier and an "
        "active API key allowed to use it at one of its tiers (default, priority, flex or ultrafast), and the "
        "configuration in force has none. Add them to the fixture, or restore it with POST /_mock/reset.",
        code="nothing_to_speed_check",
    )


def server_reset() -> ServiceUnavailableError:
    return ServiceUnavailableError(
        "The mock server was reset (POST /_mock/reset) while this request was in flight.", code="server_reset"
    )


def server_shutting_down() -> ServiceUnavailableError:
    return ServiceUnavailableError(
        "The mock server is shutting down; this request was not completed.", code="server_shutting_down"
    )


def reply_time_limit(limit_s: float) -> GatewayTimeoutError:
    return GatewayTimeoutError(
        f"This reply would take longer than the server's limit of {limit_s:g} s per reply "
        "(max_reply_seconds, MOCKSERVER_MAX_REPLY_SECONDS). Lower time_scale or raise the limit.",
        code="reply_time_limit",
    )


def json_too_deep(limit: int) -> InvalidRequestError:
    return InvalidRequestError(
        f"The request body nests JSON objects and arrays more than {limit} levels deep, the server's limit "
        "(max_json_depth, MOCKSERVER_MAX_JSON_DEPTH).",
        code="json_too_deep",
    )


def body_too_large(limit: int, received: int | None = None) -> RequestTooLargeError:
    size = "" if received is None else f" ({received} bytes or more)"
    return RequestTooLargeError(
        f"The request body{size} is larger than the server's limit of {limit} bytes "
        "(max_body_bytes, MOCKSERVER_MAX_BODY_BYTES).",
        code="request_too_large",
    )


def invalid_json() -> InvalidRequestError:
    return InvalidRequestError(
        "We could not parse the JSON body of your request. (HINT: This likely means you aren't using "
        "your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not "
        "valid JSON. If you have trouble figuring out how to fix this, please contact us through our "
        "help center at help.openai.com.)"
    )


def response_not_found(response_id: str) -> NotFoundError:
    return NotFoundError(f"Response with id '{response_id}' not found.")


def previous_response_not_found(response_id: str) -> NotFoundError:
    return NotFoundError(
        f"Previous response with id '{response_id}' not found.",
        param="previous_response_id",
        code="previous_response_not_found",
    )


def unknown_route(method: str, path: str) -> NotFoundError:
    return NotFoundError(
        f"Invalid URL ({method} {path})",
    )


def method_not_allowed(method: str, path: str) -> MockAPIError:
    error = InvalidRequestError(f"Invalid method for URL ({method} {path})")
    error.status_code = 405
    return error


def _quote_list(values: list[str]) -> str:
    quoted = [f"'{v}'" for v in values]
    if len(quoted) <= 1:
        return "".join(quoted)
    if len(quoted) == 2:
        return f"{quoted[0]} and {quoted[1]}"
    return ", ".join(quoted[:-1]) + f", and {quoted[-1]}"


# -- Durations in messages and headers -----------------------------------------------------
