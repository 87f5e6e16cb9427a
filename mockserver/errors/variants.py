"""The HTTP errors a ``status=`` fault answers with: the live API's bodies and retry headers (WIRE.md §7, §8.3).

Each status has a default error and, where the live API has several, named
variants chosen with ``code=``. Retry headers follow the live API: 429 and 503
carry ``retry-after`` / ``retry-after-ms``; a quota 429 carries
``x-should-retry: false`` so the SDKs give up at once.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from http import HTTPStatus

from mockserver import errors

DEFAULT_RETRY_AFTER_S = 1.0


@dataclass(frozen=True)
class ErrorContext:
    """What the error wording may mention about the request."""

    model: str = "gpt-5.6-sol"
    key: str | None = None
    organization: str = "org-mock"
    project: str = "proj_mock"
    tier: str = "default"
    wait: str = "1s"  # the "Please try again in ..." of the body, matching the retry headers sent


Maker = Callable[[ErrorContext], errors.MockAPIError]


def _rpm(ctx: ErrorContext) -> errors.MockAPIError:
    return errors.RateLimitError(
        f"Rate limit reached for {ctx.model} in organization {ctx.organization} on requests per min (RPM): "
        f"Limit 3, Used 3, Requested 1. Please try again in {ctx.wait}. Visit {errors.RATE_LIMITS_URL} to learn more.",
        type="requests",
        code="rate_limit_exceeded",
    )


def _tpm(ctx: ErrorContext) -> errors.MockAPIError:
    return errors.RateLimitError(
        f"Rate limit reached for {ctx.model} in organization {ctx.organization} on tokens per min (TPM): "
        f"Limit 30000, Used 29500, Requested 1200. Please try again in {ctx.wait}. "
        f"Visit {errors.RATE_LIMITS_URL} to learn more.",
        type="tokens",
        code="rate_limit_exceeded",
    )


def _quota(ctx: ErrorContext) -> errors.MockAPIError:
    return errors.RateLimitError(
        "You exceeded your current quota, please check your plan and billing details. For more information on "
        f"this error, read the docs: {errors.ERROR_CODES_URL}.",
        type="insufficient_quota",
        code="insufficient_quota",
    )


def _capacity(status: int) -> Callable[[ErrorContext], errors.MockAPIError]:
    """The same body a full Ultrafast preview capacity answers with (see :mod:`mockserver.service.capacity`)."""
    return lambda ctx: errors.ultrafast_capacity(ctx.model, status, ctx.wait)


def _overloaded_503(ctx: ErrorContext) -> errors.MockAPIError:
    return errors.ServiceUnavailableError(
        "Model temporarily overloaded", type="service_unavailable_error", code="server_is_overloaded"
    )


def _engine_503(ctx: ErrorContext) -> errors.MockAPIError:
    return errors.ServiceUnavailableError()


def _invalid_key(ctx: ErrorContext) -> errors.MockAPIError:
    return errors.invalid_api_key(ctx.key or "sk-mock")


def _project_no_access(ctx: ErrorContext) -> errors.MockAPIError:
    return errors.PermissionDeniedError(
        f"Project `{ctx.project}` does not have access to model `{ctx.model}`", code="model_not_found"
    )


def _region(ctx: ErrorContext) -> errors.MockAPIError:
    return errors.PermissionDeniedError(
        "Country, region, or territory not supported",
        type="request_forbidden",
        code="unsupported_country_region_territory",
    )


# status -> {code: maker}; the first entry is the default for that status.
CATALOGUE: dict[int, dict[str, Maker]] = {
    400: {"invalid_request_error": lambda ctx: errors.InvalidRequestError("Invalid request.")},
    401: {"invalid_api_key": _invalid_key, "missing_api_key": lambda ctx: errors.missing_api_key()},
    403: {
        "model_not_found": _project_no_access,
        "unsupported_country_region_territory": _region,
        "service_tier_not_available": lambda ctx: errors.tier_not_entitled(ctx.project, ctx.model),
    },
    404: {"model_not_found": lambda ctx: errors.model_not_found(ctx.model)},
    429: {
        "rate_limit_exceeded": _rpm,
        "tokens": _tpm,
        "insufficient_quota": _quota,
        "capacity": _capacity(429),
    },
    500: {"server_error": lambda ctx: errors.InternalServerError()},
    503: {"engine_overloaded": _engine_503, "server_is_overloaded": _overloaded_503, "capacity": _capacity(503)},
}
RETRY_AFTER_STATUSES = {429, 503}


def check_variant(status: int, code: str) -> None:
    """Raise ``ValueError`` naming the known variants when ``code`` is not one of them."""
    variants = CATALOGUE.get(status)
    if variants is not None and code not in variants:
        raise ValueError(f"status {status} has no variant '{code}'; known: {', '.join(variants)}")


def status_error(
    status: int,
    ctx: ErrorContext,
    *,
    code: str | None = None,
    retry_after: float | None = None,
    retry: bool | None = None,
    time_scale: float = 1.0,
) -> errors.MockAPIError:
    """The error a ``status=`` fault answers with, headers included.

    ``retry_after`` given is sent verbatim (so a test can check the SDK's "over
    120 s means no retry" rule); otherwise 1 s scaled by the time scale, floored at
    1 ms, so a time-scale-0 test retries at once instead of backing off.
    """
    seconds = retry_after if retry_after is not None else max(DEFAULT_RETRY_AFTER_S * time_scale, 0.001)
    ctx = replace(ctx, wait=errors.go_duration(seconds))
    variants = CATALOGUE.get(status)
    if variants:
        maker = variants[code] if code in variants else next(iter(variants.values()))
        error = maker(ctx)
    else:
        error = _generic(status, code)
    headers = dict(error.headers)
    if code == "insufficient_quota" and retry is None:
        retry = False
    if retry_after is not None or (status in RETRY_AFTER_STATUSES and retry is not False):
        headers["retry-after-ms"] = _number(seconds * 1000)
        headers["retry-after"] = str(math.ceil(seconds))
    if retry is not None:
        headers["x-should-retry"] = "true" if retry else "false"
    error.headers = headers
    return error


def _generic(status: int, code: str | None) -> errors.MockAPIError:
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "Error"
    error = errors.MockAPIError(phrase, type="server_error" if status >= 500 else "invalid_request_error", code=code)
    error.status_code = status
    return error


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.3f}".rstrip("0")
