"""The fixture's models and how they answer: each model's tiers and limits, the tiers' timing
profiles, answer lengths and parallel tool calls. Part of the fixture schema
(:class:`mockserver.config.fixture.Fixture`, which every name here is imported from as well).
"""

from __future__ import annotations

import random
from typing import Any, Literal

from pydantic import (
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from mockserver.config.accounts import Strict, Tier, standard_tiers
from mockserver.config.documents import ConfigError as ConfigError

ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"]

DEFAULT_MAX_OUTPUT_TOKENS = 128_000
# GPT-5's published window (400k tokens: prompt and output together); the simulated models follow it.
DEFAULT_CONTEXT_WINDOW = 400_000
# The Ultrafast announcement: 750 tokens/s is about 550 Chinese characters/s ("a paragraph of about
# 100 characters is about 150 tokens"; "10,000 characters in under 20 seconds"), 1.36 tokens each.
DEFAULT_ZH_TOKENS_PER_CHARACTER = 1.36


_PROFILE_EXTRAS = frozenset(
    {
        "tokens_per_second_min",
        "tokens_per_second_max",
        "chinese_characters_per_second",
        "prefill_tokens_per_second",
        "source",
    }
)


# The rates a stream may be paced at, in tokens per second: a fixture's, a --rate's and an
# x-mock-tokens-per-second header's. Below the least, a 2,000-token reply would take over two days;
# above the most, a token's interval (10 µs) is far under the server's timer tick. Within them every
# deadline is a finite number.
MIN_TOKENS_PER_SECOND = 0.01
MAX_TOKENS_PER_SECOND = 100_000.0


class TimingProfile(Strict):
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


class LengthRange(Strict):
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


class OutputLength(Strict):
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
# What a model is for: chat (Chat Completions, Responses, Messages), embeddings or moderations.
ModelKind = Literal["chat", "embedding", "moderation"]
MAX_EMBEDDING_DIMENSIONS = 16_384


class ParallelToolCalls(Strict):
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


class ModelSpec(Strict):
    """One model id that the server knows."""

    id: str
    api: ModelAPI = Field(
        default="openai",
        description="The API that serves this id: 'openai' (Chat Completions, Responses) or 'anthropic' (Messages).",
    )
    display_name: str | None = Field(default=None, description="The Anthropic model list's display_name.")
    created: int = 1786000000
    owned_by: str = "system"
    tiers: list[Tier] = Field(default_factory=standard_tiers)
    forced_tier: Tier | None = Field(
        default=None, description="Always serve this id on one tier, e.g. gpt-5.6-sol-ultrafast."
    )
    kind: ModelKind = Field(
        default="chat",
        description=(
            "What the model serves: 'chat' (Chat Completions, Responses, Messages), 'embedding' (/v1/embeddings) "
            "or 'moderation' (/v1/moderations). Each endpoint refuses the models of the other kinds."
        ),
    )
    dimensions: int | None = Field(
        default=None,
        ge=1,
        le=MAX_EMBEDDING_DIMENSIONS,
        description="An embedding model's vector length (required for kind 'embedding'); 'dimensions' may shorten it.",
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
    cache_min_tokens: int | None = Field(
        default=None,
        ge=1,
        description=(
            "The shortest prompt prefix the prompt cache keeps for this model; null: prompt_caching.min_tokens "
            "(1,024). Anthropic publishes one per model (4,096 for Claude Opus 4.5 and 4.6 and Haiku 4.5)."
        ),
    )
    cache_writes_reported: bool = Field(
        default=True,
        description=(
            "Whether usage reports the prompt tokens written to the prompt cache (cache_write_tokens). The live "
            "API reports them from the GPT-5.6 family on, where writes are billed; set false for older models."
        ),
    )

    reported_effort: ReasoningEffort | None = Field(
        default=None,
        description=(
            "The reasoning effort the Responses API reports for this model when neither the request nor "
            "default_reasoning_effort sets one (the live gpt-5.6-sol reports 'medium'); it adds no reasoning tokens."
        ),
    )
    reasoning_context: Literal["current_turn", "all_turns"] | None = Field(
        default=None,
        description=(
            "The Responses API's reasoning.context when the request sets none; set on current models, which "
            "report reasoning.context and reasoning.mode (gpt-5.6-sol: 'all_turns'). Null leaves both out."
        ),
    )
    reasoning_item_unasked: bool = Field(
        default=False,
        description=(
            "Whether the model's Responses replies carry a reasoning item (summary empty, no encrypted_content) "
            "when the request's include does not ask for reasoning.encrypted_content and the fixture plans no "
            "reasoning tokens at the effort in force, as reasoning models such as o4-mini do. False: such a "
            "model sends one only to a client that asks for the encrypted content. Needs reported_effort."
        ),
    )
    reasoning_mode: str = Field(
        default="standard", description="reasoning.mode when the request sets none, on a model with reasoning_context."
    )
    prompt_cache_retention: Literal["in_memory", "24h"] | None = Field(
        default=None,
        description=(
            "The prompt_cache_retention a Responses reply reports when the request sets none (gpt-5.6-sol: 24h)."
        ),
    )

    @model_validator(mode="after")
    def _forced_tier_supported(self) -> ModelSpec:
        if self.forced_tier is not None and self.forced_tier not in self.tiers:
            raise ValueError(f"forced_tier '{self.forced_tier}' is not in tiers {self.tiers}")
        if (self.kind == "embedding") != (self.dimensions is not None):
            raise ValueError("dimensions is required for an embedding model, and only for one")
        return self
