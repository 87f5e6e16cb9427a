"""Requests-per-minute and tokens-per-minute limits, as the live API applies and reports them.

**Which limits apply.** :func:`limits_for` looks at the key's own ``rate_limits`` first and
the fixture's after; within each, the most specific value wins (the model, then the service
tier, then the plain ``rpm``/``tpm``).

**The window.** Each (key, model) has a request window and a token window of one minute
that replenish continuously: a limit of 60 RPM gives back one request per second. This is
how the live API behaves and words it: with ``Limit 3, Used 3`` it says "Please try again in
20s" (60 s / 3), and ``x-ratelimit-reset-*`` is the time until the window is back to full.
A tier with limits of its own (``rate_limits.tiers``) gets its own window; the other tiers
share the model's, as priority and flex share standard's on the live API.

**What a request costs.** One request, and its *requested* tokens: the estimated prompt plus
the most output it may produce (``max_tokens`` / ``max_completion_tokens`` /
``max_output_tokens``, or the fixture's ``output_tokens.max``), times ``n``; OpenAI counts
the same way, before any token is generated.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mockserver import errors
from mockserver.config.fixture import DEFAULT_RATE_LIMITS, Account, Fixture, Limit, Tier
from mockserver.engine import in_turns, tokens
from mockserver.engine.conversation import system_text, text_of
from mockserver.service.per_fixture import PerFixture
from mockserver.state.store import Allowance, Store, WindowState, as_tuple, remaining, reset_seconds

SHARED_SCOPE = "shared"
ALL_MODELS = "*"


@dataclass(frozen=True)
class Limits:
    rpm: int
    tpm: int
    scope: str = SHARED_SCOPE


def limits_for(fixture: Fixture, account: Account | None, model_id: str | None, tier: Tier | None) -> Limits:
    """The RPM and TPM that apply to a key on one model and tier (or the key's base limits)."""
    levels: list[Limit | None] = []
    own_tier = False
    for source in (account.rate_limits if account else None, fixture.rate_limits):
        if source is None:
            continue
        tier_limit = source.tiers.get(tier) if tier else None
        own_tier = own_tier or tier_limit is not None
        levels += [source.models.get(model_id) if model_id else None, tier_limit, source]
    levels.append(DEFAULT_RATE_LIMITS)
    rpm = next(level.rpm for level in levels if level is not None and level.rpm is not None)
    tpm = next(level.tpm for level in levels if level is not None and level.tpm is not None)
    return Limits(rpm, tpm, tier if own_tier and tier else SHARED_SCOPE)


@dataclass(frozen=True)
class Target:
    """The two windows a reply's ``x-ratelimit-*`` headers describe.

    A target is worked out once per fixture, key, model and tier (:func:`model_target`), so it also
    holds what every admission passes the store for it (the one-request allowance and the windows
    reported) and what its replies' headers repeat (its limits, as text).
    """

    requests_bucket: str
    tokens_bucket: str
    limits: Limits
    # A model's target: the key's overall windows, which each of its requests counts in too.
    overall: Target | None = dataclasses.field(default=None, repr=False, compare=False)
    one_request: Allowance = dataclasses.field(init=False, repr=False, compare=False)
    report: tuple[tuple[str, int], ...] = dataclasses.field(init=False, repr=False, compare=False)
    limit_texts: tuple[str, str] = dataclasses.field(init=False, repr=False, compare=False)  # rpm, tpm

    def __post_init__(self) -> None:
        object.__setattr__(self, "one_request", Allowance(self.requests_bucket, self.limits.rpm, 1))
        report = ((self.requests_bucket, self.limits.rpm), (self.tokens_bucket, self.limits.tpm))
        object.__setattr__(self, "report", report)
        object.__setattr__(self, "limit_texts", (str(self.limits.rpm), str(self.limits.tpm)))

    def tokens(self, amount: int) -> Allowance:
        """The allowance of ``amount`` tokens in the token window (built as the tuple it is: one per request)."""
        return as_tuple(Allowance, (self.tokens_bucket, self.limits.tpm, amount))


def target_for(key: str, model_id: str, limits: Limits, overall: Target | None = None) -> Target:
    stem = f"{key}|{model_id}|{limits.scope}"
    return Target(f"{stem}|requests", f"{stem}|tokens", limits, overall)


# Every admitted request counts against two pairs of windows, which depend only on the fixture, the
# key, the model and the tier: worked out once per fixture rather than on every request. Each entry
# keeps the account it was worked out for, so an account object from another fixture (a request
# that authenticated just before a configuration change) never gets another's windows.
_TARGETS: PerFixture[tuple[str, str | None, Tier | None], tuple[Account, Target]] = PerFixture()


def model_target(fixture: Fixture, account: Account, model_id: str, tier: Tier) -> Target:
    """The windows a request of the key on one model and tier counts against (:func:`limits_for`)."""
    return _remembered_target(fixture, account, model_id, tier)


def key_target(fixture: Fixture, account: Account) -> Target:
    """The key's overall windows, reported by replies that concern no model (``/v1/models``, errors)."""
    return _remembered_target(fixture, account, None, None)


def _remembered_target(fixture: Fixture, account: Account, model_id: str | None, tier: Tier | None) -> Target:
    """The windows of one model and tier, or with no model the key's overall ones."""
    key = (account.key, model_id, tier)
    found = _TARGETS.find(fixture, key)
    if found is not None and found[0] is account:
        return found[1]
    # Not yet worked out, or for an account the fixture no longer has (replaced): worked out now.
    limits = limits_for(fixture, account, model_id, tier)
    if model_id is None:
        target = target_for(account.key, ALL_MODELS, limits)
    else:
        target = target_for(account.key, model_id, limits, key_target(fixture, account))
    _TARGETS.put(fixture, key, (account, target))
    return target


async def take(
    store: Store,
    now: float,
    fixture: Fixture,
    account: Account,
    model_id: str,
    target: Target,
    requested_tokens: int,
    *,
    time_scale: float = 1.0,
    request_id: str = "",
) -> tuple[dict[str, str], errors.MockAPIError | None]:
    """Count one request and its requested tokens against ``target``, or refuse it with the live 429.

    The 429's ``retry-after`` is the window's wait times ``time_scale`` (at least 1 ms), as for
    every wait the server asks for; the window itself keeps to the real clock.
    Returns the ``x-ratelimit-*`` headers as of admission, as the live API reports them (with a 429
    too), and the 429 to raise, if refused: one call to the store (one round trip to Redis) either way.
    ``request_id`` makes a retried call to a shared store count the request once.
    """
    limits = target.limits
    if requested_tokens > limits.tpm:
        raise errors.request_too_large(model_id, account.organization, limits.tpm, requested_tokens)
    overall = target.overall or key_target(fixture, account)
    admitted = await store.admit(
        now,
        (target.one_request, target.tokens(requested_tokens)),
        # Every admitted request also counts in the key's overall window, which replies that concern
        # no model report; it is not enforced here.
        also=(overall.one_request, overall.tokens(requested_tokens)),
        report=target.report,
        request_id=request_id,
    )
    shortfall = admitted.shortfall
    if shortfall is None:
        return _headers(target, *admitted.windows), None
    kind, limit, amount = (
        ("requests", limits.rpm, 1) if shortfall.index == 0 else ("tokens", limits.tpm, requested_tokens)
    )
    wait = retry_delay(shortfall.retry_after * time_scale)
    error = errors.rate_limited(
        kind, model_id, account.organization, limit, shortfall.used, amount, errors.go_duration(wait)
    )
    error.headers.update(retry_headers(wait))
    return _headers(target, *admitted.windows), error


async def headers(store: Store, now: float, target: Target) -> dict[str, str]:
    """The six ``x-ratelimit-*`` headers with the windows' counts at ``now``."""
    requests = await store.window(now, target.requests_bucket, target.limits.rpm)
    token_window = await store.window(now, target.tokens_bucket, target.limits.tpm)
    return _headers(target, requests, token_window)


def _headers(target: Target, requests: WindowState, token_window: WindowState) -> dict[str, str]:
    """The six headers of ``target``'s two windows (every reply's: its limits as the target keeps them
    written, what is left and when each is whole again, read from the windows' figures without their
    properties' calls). The store reports each window with the limit it was asked about: the target's."""
    requests_limit, requests_used = requests
    tokens_limit, tokens_used = token_window
    limit_requests, limit_tokens = target.limit_texts
    return {
        "x-ratelimit-limit-requests": limit_requests,
        "x-ratelimit-limit-tokens": limit_tokens,
        "x-ratelimit-remaining-requests": str(remaining(requests_limit, requests_used)),
        "x-ratelimit-remaining-tokens": str(remaining(tokens_limit, tokens_used)),
        "x-ratelimit-reset-requests": _duration(errors.ceil_ms(reset_seconds(requests_limit, requests_used))),
        "x-ratelimit-reset-tokens": _duration(errors.ceil_ms(reset_seconds(tokens_limit, tokens_used))),
    }


@functools.lru_cache(maxsize=4096)
def _duration(ms: int) -> str:
    """``ms`` whole milliseconds as Go writes them (:func:`mockserver.errors.go_duration`), remembered: every
    reply's headers give two, and a window resets within a minute, so the same few come again and again."""
    return errors.go_duration(ms / 1000)


def unused_headers(limits: Limits) -> dict[str, str]:
    """Headers for a caller whose windows are unknown (no valid key): full allowances."""
    return {
        "x-ratelimit-limit-requests": str(limits.rpm),
        "x-ratelimit-limit-tokens": str(limits.tpm),
        "x-ratelimit-remaining-requests": str(limits.rpm),
        "x-ratelimit-remaining-tokens": str(limits.tpm),
        "x-ratelimit-reset-requests": "0s",
        "x-ratelimit-reset-tokens": "0s",
    }


# -- Durations and retry headers --------------------------------------------------------------

MAX_RETRY_AFTER_S = 120.0  # the Python SDK ignores (and does not retry) anything longer; WIRE.md §7


def retry_delay(seconds: float) -> float:
    """A wait the SDKs will honour: whole milliseconds, at least 1 ms, at most 120 s."""
    return min(MAX_RETRY_AFTER_S, max(0.001, errors.ceil_ms(seconds) / 1000))


def retry_headers(seconds: float) -> dict[str, str]:
    """``retry-after-ms`` (which the SDKs prefer) and ``retry-after`` in whole seconds, rounded up."""
    ms = errors.ceil_ms(seconds)
    return {"retry-after-ms": str(ms), "retry-after": str(max(1, math.ceil(ms / 1000)))}


# -- Requested tokens -------------------------------------------------------------------------

_OUTPUT_LIMIT_FIELDS = ("max_completion_tokens", "max_tokens", "max_output_tokens")


def requested_tokens(fixture: Fixture, body: Any, prompt_tokens: int | None = None) -> int:
    """Estimated prompt tokens plus the maximum output, times ``n``, from a parsed request body.

    Works for Chat Completions (``messages``), the Responses API (``input``, ``instructions``)
    and Anthropic's Messages API (``messages``, ``system``, ``max_tokens``). Never raises: a body
    that isn't an object counts as an empty prompt. ``prompt_tokens``: the prompt as already
    counted (:mod:`mockserver.service.context_window` counts it once per request), else counted here.
    """
    if not isinstance(body, dict):
        body = {}
    if prompt_tokens is None:
        prompt_tokens = tokens.count_messages(prompt_texts(body))
    output = requested_output(body)
    output = fixture.output_tokens.max if output is None else output
    n = body.get("n")
    choices = (_positive_int(n) or 1) if n is not None else 1
    return prompt_tokens + output * choices


def prompt_texts(body: Any) -> list[str]:
    """The prompt's texts, one per message or input item, system prompt and instructions included."""
    if not isinstance(body, dict):
        return []
    texts: list[str] = []
    for field in ("messages", "input"):
        value = body.get(field)
        if value is not None:  # a body has one of the two
            texts += _texts_of(value)
    return _with_instructions(texts, body)


async def prompt_texts_in_turns(body: Any) -> list[str]:
    """:func:`prompt_texts`, the event loop getting its turn between pieces of many messages
    (:func:`mockserver.engine.in_turns.joined`)."""
    if not isinstance(body, dict):
        return []
    texts: list[str] = []
    for field in ("messages", "input"):
        value = body.get(field)
        if isinstance(value, list):
            texts += await in_turns.joined(_texts_of, value)
        elif value is not None:
            texts += _texts_of(value)
    return _with_instructions(texts, body)


def _with_instructions(texts: list[str], body: dict[str, Any]) -> list[str]:
    """``texts`` followed by the body's instructions or system prompt."""
    for field in ("instructions", "system"):
        value = body.get(field)
        if value and isinstance(value, str):  # an empty one is no message, as the usage counts it
            texts.append(value)
        elif value and isinstance(value, list):  # Anthropic's system prompt as text blocks
            texts.append(system_text(value))
    return texts


def requested_output(body: Any) -> int | None:
    """The output limit the request sets (``max_completion_tokens``, ``max_tokens``, ``max_output_tokens``)."""
    if not isinstance(body, dict):
        return None
    for field in _OUTPUT_LIMIT_FIELDS:  # a loop, not generators: it runs twice on every request's path
        value = body.get(field)
        if value is not None and (value := _positive_int(value)) is not None:
            return value
    return None


def _positive_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _texts_of(value: Any) -> list[str]:
    """One text per message or input item; list content is flattened."""
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list):
        return []
    texts = []
    for item in value:
        if isinstance(item, str):
            texts.append(item)
        elif isinstance(item, Mapping):  # its content, or a tool output's output
            texts.append(text_of(item["content"] if "content" in item else item.get("output")))
    return texts
