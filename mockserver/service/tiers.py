"""Service-tier resolution and timing profiles.

How a request's ``service_tier`` and model id map to the tier that serves it
(DESIGN.md §1, WIRE.md §2):

=========================================  ==============
request                                    tier used
=========================================  ==============
omitted, ``auto``, ``default``, ``scale``  ``default``
``fast``, ``priority``                     ``priority``
``flex``                                   ``flex``
``ultrafast`` or an ``-ultrafast`` model   ``ultrafast``
=========================================  ==============

A key without Ultrafast preview access that asks for ``service_tier:
"ultrafast"`` is denied (403) or downgraded to ``default``, by fixture policy.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from mockserver import errors
from mockserver.config.fixture import (
    MAX_TOKENS_PER_SECOND,
    MIN_TOKENS_PER_SECOND,
    Account,
    Fixture,
    ModelSpec,
    Tier,
    TimingProfile,
)

REQUESTABLE_TIERS = ["auto", "default", "flex", "scale", "priority", "fast", "ultrafast"]
_TIER_FOR_REQUEST: dict[str | None, Tier] = {
    None: "default",
    "auto": "default",
    "default": "default",
    "scale": "default",
    "fast": "priority",
    "priority": "priority",
    "flex": "flex",
    "ultrafast": "ultrafast",
}


@dataclass(frozen=True)
class TierDecision:
    requested: str | None
    tier: Tier
    downgraded: bool = False


def asked_tier(requested: str | None) -> Tier | None:
    """The tier a request's ``service_tier`` asks for (``fast`` is ``priority``), or None for a value
    that names none: what the journal records of a request whose tier is refused."""
    return _TIER_FOR_REQUEST.get(requested)


def resolve_tier(fixture: Fixture, account: Account, model: ModelSpec, requested: str | None) -> TierDecision:
    """Pick the tier that serves a request, or raise the error the live API would send."""
    if requested not in _TIER_FOR_REQUEST:
        raise errors.invalid_value("service_tier", requested, REQUESTABLE_TIERS)
    if model.forced_tier is not None:
        # The model id itself selects the tier; visibility was already checked with the model.
        return TierDecision(requested, model.forced_tier)
    tier = _TIER_FOR_REQUEST[requested]
    if tier not in model.tiers:
        raise errors.tier_not_supported(model.id, requested or tier, _requestable_for(model))
    if tier not in account.tiers:
        if tier == "ultrafast" and fixture.policies.ultrafast_without_access == "downgrade":
            return TierDecision(requested, "default", downgraded=True)
        if tier == "ultrafast":
            raise errors.tier_not_entitled(account.project, model.id)
        raise errors.PermissionDeniedError(
            f"Project `{account.project}` does not have access to the `{tier}` service tier.",
            param="service_tier",
            code="service_tier_not_available",
        )
    return TierDecision(requested, tier)


def _requestable_for(model: ModelSpec) -> list[str]:
    return [name for name, tier in _TIER_FOR_REQUEST.items() if name is not None and tier in model.tiers]


# -- Per-request timing overrides -------------------------------------------------------------

Number = TypeVar("Number", int, float)

# Bounds that keep one request from tying the server up: 128k tokens is the largest output the
# simulated models produce, and the SDKs give up on a reply after 10 minutes by default.
MAX_OVERRIDE_OUTPUT_TOKENS = 128_000
MAX_OVERRIDE_TTFT_MS = 600_000

HEADER_TOKENS_PER_SECOND = "x-mock-tokens-per-second"
HEADER_TTFT_MS = "x-mock-ttft-ms"
HEADER_OUTPUT_TOKENS = "x-mock-output-tokens"


@dataclass(frozen=True)
class Overrides:
    """Per-request changes from ``x-mock-*`` headers."""

    tokens_per_second: float | None = None
    ttft_ms: float | None = None
    output_tokens: int | None = None

    @classmethod
    def from_headers(cls, headers: Mapping[str, str]) -> Overrides:
        """The overrides the ``x-mock-*`` headers set, or the 400 naming a header whose value is refused."""
        return _overrides(
            headers.get(HEADER_TOKENS_PER_SECOND), headers.get(HEADER_TTFT_MS), headers.get(HEADER_OUTPUT_TOKENS)
        )

    def apply(self, profile: TimingProfile) -> TimingProfile:
        if self.tokens_per_second is None and self.ttft_ms is None:
            return profile
        return _with_timing(profile, self.tokens_per_second, self.ttft_ms)


# A test run sends the same x-mock-* values with request after request: what they parse to is
# remembered (a refused value raises, and is not). Bounded, as the values are the client's.
_PARSED_OVERRIDES = 256


@functools.lru_cache(maxsize=_PARSED_OVERRIDES)
def _overrides(tokens_per_second: str | None, ttft_ms: str | None, output_tokens: str | None) -> Overrides:
    return Overrides(
        tokens_per_second=_header_number(
            HEADER_TOKENS_PER_SECOND,
            tokens_per_second,
            float,
            positive=True,
            least=MIN_TOKENS_PER_SECOND,
            most=MAX_TOKENS_PER_SECOND,
        ),
        ttft_ms=_header_number(HEADER_TTFT_MS, ttft_ms, float, positive=False, most=MAX_OVERRIDE_TTFT_MS),
        output_tokens=_header_number(
            HEADER_OUTPUT_TOKENS, output_tokens, int, positive=False, most=MAX_OVERRIDE_OUTPUT_TOKENS
        ),
    )


# A test run sends the same x-mock-* headers with request after request: the profiles they make are
# remembered (a pydantic copy costs more than the lookup). Both sides are immutable, so the same
# profile object can serve every request; a bounded cache, as the headers' values are the client's.
_APPLIED_PROFILES = 256


@functools.lru_cache(maxsize=_APPLIED_PROFILES)
def _with_timing(profile: TimingProfile, tokens_per_second: float | None, ttft_ms: float | None) -> TimingProfile:
    """``profile`` with the rate and TTFT the ``x-mock-*`` headers set (at least one of them)."""
    changes: dict[str, float | None] = {}
    if tokens_per_second is not None:
        # The header's rate is the rate: no spread, no separate rate for Chinese.
        changes.update(
            tokens_per_second=tokens_per_second,
            tokens_per_second_min=None,
            tokens_per_second_max=None,
            chinese_characters_per_second=None,
        )
    if ttft_ms is not None:
        changes["ttft_ms"] = ttft_ms
    return profile.model_copy(update=changes)


def _header_number(
    name: str,
    raw: str | None,
    kind: Callable[[str], Number],
    *,
    positive: bool,
    least: float = 0.0,
    most: float = math.inf,
) -> Number | None:
    """A finite, non-negative (or positive) number from ``least`` up to ``most`` from header ``name``'s
    value ``raw`` (None: the header is not set), or a 400 naming it."""
    if raw is None:
        return None
    try:
        value: Number | None = kind(raw)
    except ValueError:
        value = None
    if (
        value is None
        or not math.isfinite(value)
        or value < max(0.0, least)
        or (positive and value == 0)
        or value > most
    ):
        if least > 0:
            bound = f"a number of at least {least:g}"
        else:
            bound = "a number above 0" if positive else "a number of 0 or more"
        if math.isfinite(most):
            bound += f" and at most {most:g}"
        raise errors.InvalidRequestError(
            f"Invalid value for header '{name}': '{raw}'. Expected {bound}.", param=name, code="invalid_value"
        )
    return value
