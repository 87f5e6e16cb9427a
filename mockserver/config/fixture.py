"""The fixture schema that describes the simulated world, and how fixture files are loaded.

A *fixture* is a YAML file with the models,
tier timing profiles, accounts and policies; :func:`load_fixture` validates it
against :class:`Fixture` and raises :class:`ConfigError` with a message that names
the file, the field and the problem. Reading the YAML and merging an ``extends:`` chain
is :mod:`mockserver.config.documents`. The process options (host, port, seed, ...) are
:class:`mockserver.config.settings.Settings`.

The parts of the schema are in :mod:`mockserver.config.models` (models, timing profiles, answer
lengths) and :mod:`mockserver.config.accounts` (keys, organizations, rate limits, capacity, prices,
policies); every name of theirs can be imported from here too.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from mockserver.config import suggestions
from mockserver.config.accounts import DEFAULT_RATE_LIMITS as DEFAULT_RATE_LIMITS
from mockserver.config.accounts import DEFAULT_TIER_MULTIPLIERS as DEFAULT_TIER_MULTIPLIERS
from mockserver.config.accounts import MAX_QUEUE_MS as MAX_QUEUE_MS
from mockserver.config.accounts import Account as Account
from mockserver.config.accounts import Capacity as Capacity
from mockserver.config.accounts import KeyStatus as KeyStatus
from mockserver.config.accounts import Limit as Limit
from mockserver.config.accounts import Organization as Organization
from mockserver.config.accounts import Policies as Policies
from mockserver.config.accounts import Price as Price
from mockserver.config.accounts import Pricing as Pricing
from mockserver.config.accounts import Quota as Quota
from mockserver.config.accounts import RateLimits as RateLimits
from mockserver.config.accounts import Strict as _Strict
from mockserver.config.accounts import Tier as Tier
from mockserver.config.caching import PromptCaching as PromptCaching
from mockserver.config.documents import ConfigError as ConfigError
from mockserver.config.documents import read_yaml, resolve
from mockserver.config.faults import Faults
from mockserver.config.hosted_tools import HostedTools as HostedTools
from mockserver.config.models import DEFAULT_CONTEXT_WINDOW as DEFAULT_CONTEXT_WINDOW
from mockserver.config.models import DEFAULT_LONG_ANSWER as DEFAULT_LONG_ANSWER
from mockserver.config.models import DEFAULT_MAX_OUTPUT_TOKENS as DEFAULT_MAX_OUTPUT_TOKENS
from mockserver.config.models import DEFAULT_SHORT_ANSWER as DEFAULT_SHORT_ANSWER
from mockserver.config.models import DEFAULT_ZH_TOKENS_PER_CHARACTER as DEFAULT_ZH_TOKENS_PER_CHARACTER
from mockserver.config.models import MAX_EMBEDDING_DIMENSIONS as MAX_EMBEDDING_DIMENSIONS
from mockserver.config.models import MAX_TOKENS_PER_SECOND as MAX_TOKENS_PER_SECOND
from mockserver.config.models import MIN_TOKENS_PER_SECOND as MIN_TOKENS_PER_SECOND
from mockserver.config.models import LengthRange as LengthRange
from mockserver.config.models import ModelAPI as ModelAPI
from mockserver.config.models import ModelKind as ModelKind
from mockserver.config.models import ModelSpec as ModelSpec
from mockserver.config.models import OutputLength as OutputLength
from mockserver.config.models import ParallelToolCalls as ParallelToolCalls
from mockserver.config.models import ReasoningEffort as ReasoningEffort
from mockserver.config.models import TimingProfile as TimingProfile
from mockserver.config.moderation import Moderation
from mockserver.config.patterns import compile_pattern
from mockserver.config.presets import PresetError, merge_presets
from mockserver.config.script_rules import ScriptRule

# -- Fixture schema ---------------------------------------------------------------------------


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
    prompt_caching: PromptCaching = Field(
        default_factory=PromptCaching, description="Prompt caching: on by default, as on the live APIs."
    )
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
    hosted_tools: HostedTools = Field(
        default_factory=HostedTools,
        description="What the Responses API's hosted tools find: web search results, code, vector stores.",
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
    moderation: Moderation = Field(
        default_factory=Moderation,
        description="What /v1/moderations flags: rules of a pattern and the categories it flags. None by default.",
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
        return _lookups(self).models.get(model_id)

    def account(self, key: str) -> Account | None:
        return _lookups(self).accounts.get(key)

    def organization(self, org_id: str) -> Organization:
        """The organization's settings; one that is not declared gets the defaults."""
        return _lookups(self).organizations.get(org_id) or Organization(id=org_id)

    def tokens_per_character(self, language: str) -> float | None:
        """The output token model of a language (``output_tokens_per_character``), if it has one."""
        return self.output_tokens_per_character.get("zh") if language == "zh" else None

    def profile(self, model: ModelSpec, tier: Tier) -> TimingProfile:
        return model.profiles.get(tier) or self.profiles[tier]


_LOOKUPS = "_lookups_by_id"  # the key of a fixture's _lookups in the instance's __dict__


def _lookups(fixture: Fixture) -> _Lookups:
    """The fixture's models, accounts and organizations by id, built on first use.

    Every request looks up its key, model and organization: a dict keeps that at one step
    however many a fixture declares (``PATCH /_mock/config`` takes up to ``--max-body-bytes``
    of them). Kept in the instance's ``__dict__``, which pydantic leaves out of ``==`` and of
    every dump; a copy made with ``model_copy(update=...)`` carries the old one over, so it is
    built again whenever the lists it was built from are not this fixture's own.

    A function rather than a method, and the lists read from the ``__dict__`` where pydantic keeps
    every field's value: a model's own attributes and methods are read through its ``__getattr__``
    hook, several times slower, and a request asks several times.
    """
    fields = fixture.__dict__
    lookups: _Lookups | None = fields.get(_LOOKUPS)
    if (  # built from this fixture's own lists
        lookups is None
        or lookups.sources[0] is not fields["models"]
        or lookups.sources[1] is not fields["accounts"]
        or lookups.sources[2] is not fields["organizations"]
    ):
        lookups = fields[_LOOKUPS] = _Lookups(fixture)
    return lookups


class _Lookups:
    """A fixture's models, accounts and organizations by id (the first of each, as a scan would find)."""

    def __init__(self, fixture: Fixture) -> None:
        self.sources = (fixture.models, fixture.accounts, fixture.organizations)
        self.models: dict[str, ModelSpec] = {}
        self.accounts: dict[str, Account] = {}
        self.organizations: dict[str, Organization] = {}
        for model in fixture.models:
            self.models.setdefault(model.id, model)
        for account in fixture.accounts:
            self.accounts.setdefault(account.key, account)
        for organization in fixture.organizations:
            self.organizations.setdefault(organization.id, organization)
        for account in fixture.accounts:  # an undeclared one gets the defaults, made once (they never change)
            if account.organization not in self.organizations:
                self.organizations[account.organization] = Organization(id=account.organization)


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
