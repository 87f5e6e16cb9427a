"""The fixture's accounts and what they may spend: keys, organizations and their quotas, rate limits,
the Ultrafast capacity, prices and the access policies. Part of the fixture schema
(:class:`mockserver.config.fixture.Fixture`, which every name here is imported from as well).
"""

from __future__ import annotations

from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
)

from mockserver.config.documents import ConfigError as ConfigError

Tier = Literal["default", "priority", "flex", "ultrafast"]
# The longest wait for an Ultrafast slot the fixture may ask for (capacity.queue_ms): a minute.
MAX_QUEUE_MS = 60_000


def standard_tiers() -> list[Tier]:
    return ["default", "priority", "flex"]


class Strict(BaseModel):
    """A part of the fixture: unknown fields are refused, and nothing changes once loaded."""

    model_config = ConfigDict(extra="forbid", frozen=True)


KeyStatus = Literal["active", "revoked", "deactivated"]


class Limit(Strict):
    """Requests and tokens per minute. ``None`` leaves the value to the next, more general level."""

    rpm: int | None = Field(default=None, ge=1, description="Requests per minute.")
    tpm: int | None = Field(default=None, ge=1, description="Tokens per minute (estimated prompt + max output).")


class RateLimits(Limit):
    """Rate limits at one level (the fixture's defaults, or one key's overrides).

    The most specific value wins: ``models[<id>]``, then ``tiers[<tier>]``, then ``rpm``/``tpm``;
    a key's own values win over the fixture's at each step. A tier listed under ``tiers`` gets its
    own window; every other tier shares the model's window (as priority and flex do on the live API).
    """

    models: dict[str, Limit] = Field(default_factory=dict, description="Per-model limits.")
    tiers: dict[Tier, Limit] = Field(default_factory=dict, description="Per-service-tier limits.")


DEFAULT_RATE_LIMITS = RateLimits(rpm=10_000, tpm=30_000_000)


class Account(Strict):
    """An API key: the organization and project it belongs to, and what it may use."""

    key: str = Field(min_length=1)
    organization: str = "org-mock"
    project: str = "proj_mock"
    status: KeyStatus = Field(
        default="active",
        description=(
            "'revoked': the key was deleted (401 invalid_api_key); 'deactivated': the account behind it "
            "was deactivated (401 account_deactivated)."
        ),
    )
    tiers: list[Tier] = Field(
        default_factory=standard_tiers,
        description="Tiers this key is entitled to. 'ultrafast' here means Ultrafast preview access.",
    )
    models: list[str] | None = Field(default=None, description="Model ids this key's project may use; null means all.")
    rate_limits: RateLimits | None = Field(default=None, description="Overrides of the fixture's rate limits.")

    @property
    def has_preview(self) -> bool:
        return "ultrafast" in self.tiers


class Quota(Strict):
    """What an organization may spend in all before requests fail with 429 ``insufficient_quota``."""

    spend_usd: float | None = Field(default=None, ge=0, description="Budget in US dollars; null: unlimited.")
    tokens: int | None = Field(default=None, ge=0, description="Budget in tokens (input + output); null: unlimited.")


class Organization(Strict):
    """Properties shared by every key of one organization. Undeclared organizations get the defaults."""

    id: str = Field(min_length=1)
    name: str = "Mock organization"
    region_blocked: bool = Field(
        default=False, description="Answer every request with 403 unsupported_country_region_territory."
    )
    quota: Quota = Field(default_factory=Quota)
    ultrafast_concurrency: int | None = Field(
        default=None, ge=0, description="Ultrafast requests this organization may have in flight; null: no own cap."
    )


class Capacity(Strict):
    """The limited Ultrafast preview capacity, shared by the whole server."""

    ultrafast_concurrency: int | None = Field(
        default=16, ge=0, description="Ultrafast requests (streams and non-streaming) in flight at once; null: no cap."
    )
    when_full: Literal["reject", "downgrade"] = Field(
        default="reject",
        description="Past the cap: 'reject' answers reject_status; 'downgrade' serves the request at 'default'.",
    )
    reject_status: Literal[429, 503] = 429
    retry_after_ms: int = Field(
        default=1000, ge=1, le=120_000, description="The retry-after sent with a capacity rejection."
    )
    queue_ms: float = Field(
        default=0,
        ge=0,
        le=MAX_QUEUE_MS,
        description=(
            "While the pools are full, how long a request waits for a slot (scaled by time_scale) before "
            "when_full applies. Its TTFT includes the wait. 0: no wait."
        ),
    )


class Price(Strict):
    """Standard-tier prices in US dollars per million tokens. Reasoning tokens are billed as output."""

    input_per_million: float = Field(ge=0)
    output_per_million: float = Field(ge=0)
    cached_input_per_million: float | None = Field(
        default=None, ge=0, description="Input tokens read from the prompt cache; null: the input price."
    )
    cache_write_per_million: float | None = Field(
        default=None, ge=0, description="Input tokens written to the prompt cache; null: the input price."
    )
    tier_multipliers: dict[Tier, float] = Field(
        default_factory=dict, description="This model's own price factor per tier, over pricing.tier_multipliers."
    )


DEFAULT_TIER_MULTIPLIERS: dict[Tier, float] = {"default": 1.0, "priority": 2.0, "flex": 0.5, "ultrafast": 5.0}


class Pricing(Strict):
    models: dict[str, Price] = Field(default_factory=dict, description="Standard prices per model id.")
    default: Price = Field(
        default_factory=lambda: Price(input_per_million=0, output_per_million=0),
        description="Prices of a model not listed under models.",
    )
    tier_multipliers: dict[Tier, float] = Field(
        default_factory=lambda: dict(DEFAULT_TIER_MULTIPLIERS),
        description="Price factor per service tier. Ultrafast's price is unpublished: 5x is an assumption.",
    )

    def price(self, model_id: str) -> Price:
        return self.models.get(model_id, self.default)

    def multiplier(self, tier: str, model_id: str | None = None) -> float:
        own = self.models[model_id].tier_multipliers if model_id in self.models else {}
        for factors in (own, self.tier_multipliers):
            factor = next((f for name, f in factors.items() if name == tier), None)
            if factor is not None:
                return factor
        return 1.0


class Policies(Strict):
    ultrafast_without_access: Literal["deny", "downgrade"] = Field(
        default="deny",
        description=(
            "A key without preview access asks for service_tier 'ultrafast': 'deny' answers 403, "
            "'downgrade' serves it at 'default' and reports service_tier 'default'."
        ),
    )
    chat_ultrafast_service_tier: Literal["priority", "ultrafast"] = Field(
        default="priority",
        description=(
            "What Chat Completions report when a request ran on Ultrafast. The SDKs' ChatCompletion "
            "type has no 'ultrafast' value, so strict clients reject it; 'priority' keeps them working."
        ),
    )
