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
TTL_S = 1800.0  # GPT-5.6 on: prompt_cache_options.ttl "30m", the least a written prefix is kept
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
            "OpenAI: seconds an unused prefix is kept (scaled by time_scale; a hit refreshes it). From the GPT-5.6 "
            "family on, the live API keeps a written prefix at least 30 minutes (prompt_cache_options.ttl '30m'); "
            "older models, 5 to 10 minutes, up to an hour off-peak."
        ),
    )
    extended_ttl_s: float = Field(
        default=EXTENDED_TTL_S, gt=0, description="OpenAI: the same, for requests with prompt_cache_retention '24h'."
    )
