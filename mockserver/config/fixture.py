"""The fixture schema that describes the simulated world, and how fixture files are loaded.

A *fixture* is a YAML file with the models,
tier timing profiles, accounts and policies; :func:`load_fixture` validates it
against :class:`Fixture` and raises :class:`ConfigError` with a message that names
the file, the field and the problem. Reading the YAML and merging an ``extends:`` chain
is :mod:`mockserver.config.documents`. The process options (host, port, seed, ...) are
:class:`mockserver.config.settings.Settings`.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Hashable, Sequence
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from mockserver.config import suggestions
from mockserver.config.documents import ConfigError as ConfigError
from mockserver.config.documents import read_yaml, resolve
from mockserver.config.faults import Faults
from mockserver.config.patterns import compile_pattern
from mockserver.config.presets import PresetError, merge_presets
from mockserver.config.scripts import ScriptRule

Tier = Literal["default", "priority", "flex", "ultrafast"]
ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"]

DEFAULT_MAX_OUTPUT_TOKENS = 128_000
# GPT-5's published window (400k tokens: prompt and output together); the simulated models follow it.
DEFAULT_CONTEXT_WINDOW = 400_000
# The longest wait for an Ultrafast slot the fixture may ask for (capacity.queue_ms): a minute.
MAX_QUEUE_MS = 60_000
# The Ultrafast announcement: 750 tokens/s is about 550 Chinese characters/s ("a paragraph of about
# 100 characters is about 150 tokens"; "10,000 characters in under 20 seconds"), 1.36 tokens each.
DEFAULT_ZH_TOKENS_PER_CHARACTER = 1.36


# -- Fixture schema ---------------------------------------------------------------------------


def _standard_tiers() -> list[Tier]:
    return ["default", "priority", "flex"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


_PROFILE_EXTRAS = frozenset(
    {
        "tokens_per_second_min",
        "tokens_per_second_max",
        "chinese_characters_per_second",
        "prefill_tokens_per_second",
        "source",
    }
)


# The rates a stream may be paced at, in tokens per second: a fixture's and an x-mock-tokens-per-second
# header's. Below the least, a 2,000-token reply would take over two days; above the most, a token's
# interval (10 µs) is far under the server's timer tick, and every deadline stays a finite number.
MIN_TOKENS_PER_SECOND = 0.01
MAX_TOKENS_PER_SECOND = 100_000.0


class TimingProfile(_Strict):
    """How fast one tier produces tokens."""

    tokens_per_second: float = Field(
        ge=MIN_TOKENS_PER_SECOND,
        le=MAX_TOKENS_PER_SECOND,
        description="Output tokens per second once generation starts (0.01 to 100,000).",
    )
    ttft_ms: float = Field(ge=0, description="Time to first token of an empty prompt, in milliseconds.")
    prefill_tokens_per_second: float | None = Field(
        default=None,
        gt=0,
        description=(
            "Prompt tokens read per second before the first token: the TTFT is ttft_ms plus "
            "prompt tokens / this rate. Null: the TTFT does not depend on the prompt."
        ),
    )
    jitter: float = Field(
        default=0.0,
        ge=0,
        lt=1,
        description="Per-token timing noise, as a fraction of one token interval. The average rate is unaffected.",
    )
    tokens_per_chunk: int = Field(default=1, ge=1, description="Tokens per streamed chunk when on schedule.")
    tokens_per_second_min: float | None = Field(
        default=None,
        gt=0,
        description=(
            "With tokens_per_second_max: each request draws its own rate from a triangular spread between "
            "the two, peaking at tokens_per_second (seeded per request), as shared GPU serving varies."
        ),
    )
    tokens_per_second_max: float | None = Field(default=None, gt=0, description="See tokens_per_second_min.")
    chinese_characters_per_second: float | None = Field(
        default=None,
        gt=0,
        description=(
            "The rate of replies in Chinese, in characters/s; paced at this times output_tokens_per_character "
            "tokens/s. Null: tokens_per_second, which gives tokens_per_second / output_tokens_per_character "
            "characters/s."
        ),
    )
    source: str | None = Field(default=None, description="Where the figures come from; 'assumption' where unpublished.")

    @model_serializer(mode="wrap")
    def _without_unset_extras(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Leave the optional fields out while unset, so a profile reads as it was written."""
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if not (k in _PROFILE_EXTRAS and v is None)}

    @model_validator(mode="after")
    def _spread_ordered(self) -> TimingProfile:
        low, high = self.tokens_per_second_min, self.tokens_per_second_max
        if (low is None) != (high is None):
            raise ValueError("tokens_per_second_min and tokens_per_second_max go together")
        if low is not None and high is not None and not low <= self.tokens_per_second <= high:
            raise ValueError("tokens_per_second must lie between tokens_per_second_min and tokens_per_second_max")
        return self

    def rate(self, rng: random.Random | int, language: str = "en", tokens_per_character: float | None = None) -> float:
        """The output rate of one request, in tokens/s: the Chinese rate for Chinese text (its
        characters/s times the output token model's ``tokens_per_character``, so that many
        characters arrive each second), else a draw from the spread when one is set, else
        ``tokens_per_second``.

        ``rng`` is the request's own random source, or the seed to make it from: then it is made
        only when there is a spread to draw from (making one costs about 6 µs per request).
        """
        if language == "zh" and self.chinese_characters_per_second is not None:
            return self.chinese_characters_per_second * (tokens_per_character or 1.0)
        if self.tokens_per_second_min is not None and self.tokens_per_second_max is not None:
            if isinstance(rng, int):
                rng = random.Random(rng)
            return rng.triangular(self.tokens_per_second_min, self.tokens_per_second_max, self.tokens_per_second)
        return self.tokens_per_second


class LengthRange(_Strict):
    """A range of answer lengths, in output tokens; each answer draws one length from it, by its seed."""

    min: int = Field(ge=1)
    max: int = Field(ge=1)

    @model_validator(mode="after")
    def _ordered(self) -> LengthRange:
        if self.min > self.max:
            raise ValueError(f"min ({self.min}) must not exceed max ({self.max})")
        return self


DEFAULT_LONG_ANSWER = LengthRange(min=1500, max=3000)
DEFAULT_SHORT_ANSWER = LengthRange(min=1, max=16)


class OutputLength(_Strict):
    """Length of generated answers, per kind of request, before any ``max_tokens`` cut.

    ``min``/``max`` are for ordinary requests. A request that asks for something long
    (a story, an essay, a report, "in detail", "1000 words") draws from ``long``; one that
    asks for something short ("one word", "yes or no", "briefly") from ``short``.
    """

    min: int = Field(default=40, ge=1)
    max: int = Field(default=160, ge=1)
    long: LengthRange = Field(
        default=DEFAULT_LONG_ANSWER,
        description="Answers to requests for something long: stories, essays, articles, reports, 'in detail'.",
    )
    short: LengthRange = Field(
        default=DEFAULT_SHORT_ANSWER,
        description="Answers to requests for something short: 'one word', 'yes or no', 'briefly'.",
    )

    @model_validator(mode="after")
    def _ordered(self) -> OutputLength:
        if self.min > self.max:
            raise ValueError(f"min ({self.min}) must not exceed max ({self.max})")
        return self

    def range_for(self, kind: str) -> tuple[int, int]:
        """The (min, max) range of one kind of request: ``long``, ``short`` or anything else."""
        if kind == "long":
            return self.long.min, self.long.max
        if kind == "short":
            return self.short.min, self.short.max
        return self.min, self.max

    @property
    def longest(self) -> int:
        """The longest answer the server writes for any request."""
        return max(self.max, self.long.max, self.short.max)


ModelAPI = Literal["openai", "anthropic"]


class ParallelToolCalls(_Strict):
    """How often a reply that calls a tool calls several at once (when the request allows it)."""

    probability: float = Field(
        default=0.0,
        ge=0,
        le=1,
        description=(
            "Chance that a generated reply calling a tool also calls other offered tools, unless the request sets "
            "parallel_tool_calls false or tool_choice names one function. Drawn from the request's seed."
        ),
    )
    max_calls: int = Field(default=3, ge=2, le=16, description="The most functions one reply calls at once.")


class ModelSpec(_Strict):
    """One model id that the server knows."""

    id: str
    api: ModelAPI = Field(
        default="openai",
        description="The API that serves this id: 'openai' (Chat Completions, Responses) or 'anthropic' (Messages).",
    )
    display_name: str | None = Field(default=None, description="The Anthropic model list's display_name.")
    created: int = 1786000000
    owned_by: str = "system"
    tiers: list[Tier] = Field(default_factory=_standard_tiers)
    forced_tier: Tier | None = Field(
        default=None, description="Always serve this id on one tier, e.g. gpt-5.6-sol-ultrafast."
    )
    reasoning: bool = Field(default=True, description="Whether reasoning effort adds reasoning tokens.")
    max_output_tokens: int = Field(
        default=DEFAULT_MAX_OUTPUT_TOKENS,
        ge=1,
        description="The most output tokens one answer may ask for: a larger max_tokens is refused with 400.",
    )
    context_window: int = Field(
        default=DEFAULT_CONTEXT_WINDOW,
        ge=1,
        description=(
            "Tokens of prompt and output together the model can hold: a longer prompt, or a prompt plus "
            "max_tokens past it, is refused with 400 context_length_exceeded."
        ),
    )
    profiles: dict[Tier, TimingProfile] = Field(
        default_factory=dict, description="Per-tier timing overrides for this model."
    )

    @model_validator(mode="after")
    def _forced_tier_supported(self) -> ModelSpec:
        if self.forced_tier is not None and self.forced_tier not in self.tiers:
            raise ValueError(f"forced_tier '{self.forced_tier}' is not in tiers {self.tiers}")
        return self


KeyStatus = Literal["active", "revoked", "deactivated"]


class Limit(_Strict):
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


class Account(_Strict):
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
        default_factory=_standard_tiers,
        description="Tiers this key is entitled to. 'ultrafast' here means Ultrafast preview access.",
    )
    models: list[str] | None = Field(default=None, description="Model ids this key's project may use; null means all.")
    rate_limits: RateLimits | None = Field(default=None, description="Overrides of the fixture's rate limits.")

    @property
    def has_preview(self) -> bool:
        return "ultrafast" in self.tiers


class Quota(_Strict):
    """What an organization may spend in all before requests fail with 429 ``insufficient_quota``."""

    spend_usd: float | None = Field(default=None, ge=0, description="Budget in US dollars; null: unlimited.")
    tokens: int | None = Field(default=None, ge=0, description="Budget in tokens (input + output); null: unlimited.")


class Organization(_Strict):
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


class Capacity(_Strict):
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


class Price(_Strict):
    """Standard-tier prices in US dollars per million tokens. Reasoning tokens are billed as output."""

    input_per_million: float = Field(ge=0)
    output_per_million: float = Field(ge=0)
    tier_multipliers: dict[Tier, float] = Field(
        default_factory=dict, description="This model's own price factor per tier, over pricing.tier_multipliers."
    )


DEFAULT_TIER_MULTIPLIERS: dict[Tier, float] = {"default": 1.0, "priority": 2.0, "flex": 0.5, "ultrafast": 5.0}


class Pricing(_Strict):
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


class Policies(_Strict):
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


DEFAULT_REASONING_TOKENS: dict[ReasoningEffort, int] = {
    "none": 0,
    "minimal": 16,
    "low": 64,
    "medium": 256,
    "high": 1024,
    "xhigh": 2048,
    "max": 4096,
}


class Fixture(_Strict):
    """The whole simulated world: models, tier profiles, accounts and policies."""

    profiles: dict[Tier, TimingProfile]
    models: list[ModelSpec] = Field(min_length=1)
    accounts: list[Account] = Field(min_length=1)
    organizations: list[Organization] = Field(default_factory=list)
    rate_limits: RateLimits = Field(default_factory=lambda: DEFAULT_RATE_LIMITS)
    capacity: Capacity = Field(default_factory=Capacity)
    pricing: Pricing = Field(default_factory=Pricing)
    policies: Policies = Field(default_factory=Policies)
    output_tokens: OutputLength = Field(default_factory=OutputLength)
    output_tokens_per_character: dict[Literal["zh"], Annotated[float, Field(ge=1, le=4)]] = Field(
        default_factory=lambda: {"zh": DEFAULT_ZH_TOKENS_PER_CHARACTER},  # type: ignore[arg-type]
        description=(
            "The output token model of generated Chinese: tokens per character, calibrated to the "
            "Ultrafast announcement (1.36: 750 tokens/s is about 550 characters/s). English output "
            "and every prompt are counted with o200k_base."
        ),
    )
    reasoning_tokens: dict[ReasoningEffort, int] = Field(
        default_factory=lambda: dict(DEFAULT_REASONING_TOKENS),
        description="Reasoning tokens produced for each reasoning effort level.",
    )
    default_reasoning_effort: ReasoningEffort | None = Field(
        default=None, description="Effort used by reasoning models when the request sets none."
    )
    faults: Faults = Field(
        default_factory=Faults, description="Fault injection: rules matched per request, and a server-wide probability."
    )
    parallel_tool_calls: ParallelToolCalls = Field(
        default_factory=ParallelToolCalls, description="How often a reply calls several tools at once."
    )
    scripts_strict: bool = Field(
        default=False,
        description=(
            "Refuse a request that no script rule answers with a 400 (code 'unscripted_request') naming the "
            "request and the rules tried, instead of generating a reply: a test suite can insist every call "
            "is scripted."
        ),
    )
    scripts: list[ScriptRule] = Field(
        default_factory=list,
        description="Scripted replies: the first rule that matches a request answers it; otherwise text is generated.",
    )
    presets: list[str] = Field(
        default_factory=list,
        description="Timing presets merged into this fixture when it is loaded (see `mockserver presets`).",
    )
    redact: list[str] = Field(
        default_factory=list,
        description="Regexes (RE2) whose matches `mockserver record` replaces by [redacted] in every string it writes.",
    )

    replay: list[str] = Field(
        default_factory=list,
        description="Cassettes whose recordings answer the requests that match them (docs/recording.md).",
    )
    replay_ignore: list[str] = Field(
        default_factory=list,
        description=(
            "Body fields left out when a request is matched to a recording, besides stream, stream_options, "
            "user, metadata and store; a dotted path names a nested field, '*' every item of a list."
        ),
    )
    replay_timing: Literal["recorded", "tier", "instant"] = Field(
        default="recorded",
        description=(
            "How a recording is paced: 'recorded' (its own TTFT and event offsets), 'tier' (re-paced at the "
            "profile of the tier the request asks for) or 'instant'; the time scale applies to all three."
        ),
    )
    replay_miss: Literal["error", "generate", "record"] = Field(
        default="error",
        description=(
            "A request no recording matches: 'error' (a 400, code no_recording, naming the nearest recording), "
            "'generate' (a generated reply) or 'record' (forwarded to --upstream, recorded and answered)."
        ),
    )

    @field_validator("redact")
    @classmethod
    def _patterns_compile(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            compile_pattern(pattern)  # refused at load time, not on the first recorded exchange
        return patterns

    @model_validator(mode="after")
    def _consistent(self) -> Fixture:
        missing = [t for t in ("default", "priority", "flex", "ultrafast") if t not in self.profiles]
        if missing:
            raise ValueError(f"profiles is missing the tiers {missing}")
        ids = [m.id for m in self.models]
        if len(ids) != len(set(ids)):
            raise ValueError("models has duplicate ids")
        keys = [a.key for a in self.accounts]
        if len(keys) != len(set(keys)):
            raise ValueError("accounts has duplicate keys")
        orgs = [o.id for o in self.organizations]
        if len(orgs) != len(set(orgs)):
            raise ValueError("organizations has duplicate ids")
        return self

    def model(self, model_id: str) -> ModelSpec | None:
        return next((m for m in self.models if m.id == model_id), None)

    def account(self, key: str) -> Account | None:
        return next((a for a in self.accounts if a.key == key), None)

    def organization(self, org_id: str) -> Organization:
        """The organization's settings; one that is not declared gets the defaults."""
        return next((o for o in self.organizations if o.id == org_id), None) or Organization(id=org_id)

    def tokens_per_character(self, language: str) -> float | None:
        """The output token model of a language (``output_tokens_per_character``), if it has one."""
        return self.output_tokens_per_character.get("zh") if language == "zh" else None

    def profile(self, model: ModelSpec, tier: Tier) -> TimingProfile:
        return model.profiles.get(tier) or self.profiles[tier]


# -- Derived values ---------------------------------------------------------------------------

Key = TypeVar("Key", bound=Hashable)
Value = TypeVar("Value")


class PerFixture(Generic[Key, Value]):
    """Values that depend on the fixture alone, worked out once and remembered until it is replaced.

    A fixture never changes: ``PATCH /_mock/config`` and a reset put a new one in place, and the
    values remembered for the old one are dropped the first time the new one is asked about. So at
    most one fixture's values are kept, and their number is bounded by what the fixture declares.
    Safe across threads (several servers may share a process): each lookup reads the fixture and
    its table together, and a value is computed again rather than ever taken from another fixture.
    """

    def __init__(self) -> None:
        self._current: tuple[Fixture | None, dict[Key, Value]] = (None, {})

    def get(self, fixture: Fixture, key: Key, compute: Callable[[], Value]) -> Value:
        owner, table = self._current
        if owner is not fixture:
            table = {}
            self._current = (fixture, table)
        if key in table:
            return table[key]
        value = table[key] = compute()
        return value

    def put(self, fixture: Fixture, key: Key, value: Value) -> None:
        """Remember ``value`` for ``key``, if ``fixture`` is still the one whose values are kept."""
        owner, table = self._current
        if owner is fixture:
            table[key] = value


# -- Loading ----------------------------------------------------------------------------------


def default_fixture_path() -> Path:
    """The built-in fixture: packaged with the wheel, or at the repository root in a checkout."""
    packaged = resources.files("mockserver") / "fixtures" / "default.yaml"
    if packaged.is_file():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[2] / "fixtures" / "default.yaml"


def load_fixture(path: str | os.PathLike[str] | None = None, presets: Sequence[str] = ()) -> Fixture:
    """Read and validate a fixture file, its ``extends:`` chain merged in. ``None`` loads the built-in one.

    ``presets`` are merged in after the file's own ``presets:`` (see :mod:`mockserver.config.presets`).
    """
    return parse_fixture(load_fixture_data(path), source=str(_source(path)), presets=presets)


def load_fixture_data(path: str | os.PathLike[str] | None = None) -> Any:
    """A fixture file as plain data, ``extends:`` resolved, not yet validated."""
    source = _source(path)
    return resolve(read_yaml(source), source, default_fixture_path())


def _source(path: str | os.PathLike[str] | None) -> Path:
    return Path(path) if path is not None else default_fixture_path()


def parse_fixture(data: Any, *, source: str = "<fixture>", presets: Sequence[str] = ()) -> Fixture:
    if not isinstance(data, dict):
        raise ConfigError(f"config file {source}: the top level must be a mapping of fields")
    names = data.get("presets") or []
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ConfigError(f"config file {source}: presets: must be a list of preset names")
    if names or presets:
        try:
            data = merge_presets(data, [*names, *(p for p in presets if p not in names)])
        except PresetError as exc:
            raise ConfigError(f"config file {source}: {exc}") from None
    try:
        return Fixture.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"config file {source}: {describe_validation_error(exc, Fixture)}") from None


def describe_validation_error(exc: ValidationError, model: type[BaseModel] | None = None) -> str:
    """One line per problem: ``field.path: what is wrong``. Given the ``model`` validated, an unknown
    field names the closest known one: ``profiles.ultrafast: unknown field `tokens_per_secnd`, did
    you mean `tokens_per_second`?``."""
    lines = []
    for err in exc.errors():
        loc = err["loc"]
        if err["type"] == "extra_forbidden" and model is not None and loc:
            where = ".".join(str(p) for p in loc[:-1]) or "(top level)"
            lines.append(f"{where}: {suggestions.describe_unknown(model, loc)}")
            continue
        where = ".".join(str(p) for p in loc) or "(top level)"
        message = err["msg"].removeprefix("Value error, ")
        lines.append(f"{where}: {message}")
    return "; ".join(lines)
