"""The ``prompt_caching`` section of a fixture: whether prompt prefixes are cached, and for how long.

On by default, as on the live services. OpenAI caches automatically (prompts of
``min_tokens`` or more, hits in steps of ``increment`` tokens); Anthropic caches what
``cache_control`` marks. The service that applies it is :mod:`mockserver.service.prompt_cache`;
docs/prompt-caching.md describes the behaviour. Part of the fixture schema
(:mod:`mockserver.config.fixture`).
"""

from __future__ import annotations

from pydantic import Field

from mockserver.config.accounts import Strict

MIN_TOKENS = 1024  # OpenAI: prompts shorter than this are never cached
INCREMENT = 128  # OpenAI: a hit covers a multiple of this many tokens
TTL_S = 600.0  # OpenAI's in-memory retention: "5 to 10 minutes of inactivity"
EXTENDED_TTL_S = 86_400.0  # prompt_cache_retention "24h"
ANTHROPIC_TTL_S = {"5m": 300.0, "1h": 3600.0}


class PromptCaching(Strict):
    """How the server caches prompt prefixes (docs/prompt-caching.md)."""

    enabled: bool = Field(
        default=True,
        description=(
            "Cache prompt prefixes and report the cached tokens in usage, with a shorter TTFT. False: every "
            "request reports 0 cached tokens and reads its whole prompt at the prefill rate (for tests that "
            "assert exact TTFTs or input costs)."
        ),
    )
    min_tokens: int = Field(default=MIN_TOKENS, ge=1, description="OpenAI: the shortest prompt that is cached.")
    increment: int = Field(default=INCREMENT, ge=1, description="OpenAI: a hit is rounded down to a multiple of this.")
    ttl_s: float = Field(
        default=TTL_S,
        gt=0,
        description=(
            "OpenAI: seconds an unused prefix is kept (scaled by time_scale; a hit refreshes it). The live API "
            "keeps them 5 to 10 minutes, up to an hour off-peak."
        ),
    )
    extended_ttl_s: float = Field(
        default=EXTENDED_TTL_S, gt=0, description="OpenAI: the same, for requests with prompt_cache_retention '24h'."
    )
