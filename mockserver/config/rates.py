"""Throughput set without a file: ``serve --rate TIER=TOKENS_PER_S[:TTFT_MS]`` and ``MOCKSERVER_RATES``.

``--rate ultrafast=300:150 --rate default=40`` (or ``MOCKSERVER_RATES=ultrafast=300:150,default=40``,
the Docker and CI case) sets the fixture's profile of each tier named, on every model that does not
set that tier in its own ``profiles``. What wins, most specific first:

1. the ``x-mock-tokens-per-second`` / ``x-mock-ttft-ms`` headers of one request;
2. a model's own ``profiles`` (a preset's models, or a fixture's);
3. ``--rate``, or else ``MOCKSERVER_RATES`` (a flag beats its variable, as everywhere);
4. the fixture's ``profiles``.

A ``PATCH /_mock/config`` of ``profiles`` after the start changes the profile in force; a reset
goes back to the start, rates applied. A rate given here is the tier's only rate: a spread
(``tokens_per_second_min`` / ``_max``) of that profile is dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mockserver.config.documents import ConfigError
from mockserver.config.fixture import Fixture
from mockserver.config.models import MAX_TOKENS_PER_SECOND, MIN_TOKENS_PER_SECOND

TIERS = ("default", "priority", "flex", "ultrafast")
MAX_TTFT_MS = 3_600_000.0  # an hour
FORMAT = "TIER=TOKENS_PER_S[:TTFT_MS], e.g. ultrafast=300:150"


@dataclass(frozen=True)
class Rate:
    tier: str
    tokens_per_second: float
    ttft_ms: float | None = None

    def __str__(self) -> str:
        ttft = "" if self.ttft_ms is None else f":{self.ttft_ms:g}"
        return f"{self.tier}={self.tokens_per_second:g}{ttft}"


def parse_rate(text: str) -> Rate:
    """``"ultrafast=300:150"`` -> ``Rate("ultrafast", 300, 150)``; a bad one is a one-line :class:`ConfigError`."""
    tier, sep, value = text.strip().partition("=")
    tier = tier.strip().lower()
    if not sep or not tier or not value:
        raise ConfigError(f"rate {text!r} is not {FORMAT}")
    if tier not in TIERS:
        raise ConfigError(f"rate {text!r}: unknown tier {tier!r}; the tiers are {', '.join(TIERS)}")
    speed, colon, ttft = value.partition(":")
    if colon and not ttft.strip():
        raise ConfigError(f"rate {text!r}: the time to first token is missing after ':' ({FORMAT})")
    try:
        tokens_per_second = float(speed)
        ttft_ms = float(ttft) if ttft else None
    except ValueError:
        raise ConfigError(f"rate {text!r}: the values must be numbers ({FORMAT})") from None
    if not MIN_TOKENS_PER_SECOND <= tokens_per_second <= MAX_TOKENS_PER_SECOND:
        raise ConfigError(
            f"rate {text!r}: tokens per second must be from {MIN_TOKENS_PER_SECOND:g} to {MAX_TOKENS_PER_SECOND:g}"
        )
    if ttft_ms is not None and not 0 <= ttft_ms <= MAX_TTFT_MS:
        raise ConfigError(f"rate {text!r}: the time to first token must be 0 to {MAX_TTFT_MS:g} ms")
    return Rate(tier, tokens_per_second, ttft_ms)


def parse_rates(items: Sequence[str]) -> dict[str, Rate]:
    """Each tier's rate; a tier given twice keeps the last."""
    return {rate.tier: rate for rate in map(parse_rate, items)}


def apply_rates(fixture: Fixture, items: Sequence[str]) -> Fixture:
    """``fixture`` with the fixture-wide profile of each tier in ``items`` set to its rate."""
    rates = parse_rates(items)
    if not rates:
        return fixture
    profiles = dict(fixture.profiles)
    for tier, rate in rates.items():
        changes: dict[str, float | None] = {
            "tokens_per_second": rate.tokens_per_second,
            "tokens_per_second_min": None,
            "tokens_per_second_max": None,
        }
        if rate.ttft_ms is not None:
            changes["ttft_ms"] = rate.ttft_ms
        profiles[tier] = profiles[tier].model_copy(update=changes)  # type: ignore[index]
    return fixture.model_copy(update={"profiles": profiles})
