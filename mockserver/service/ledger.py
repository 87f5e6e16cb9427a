"""The usage ledger: what every successful inference reply used and would have cost.

Each reply that completed is recorded once, by key, model and the tier that served it,
with the same token counts as the ``usage`` block the client received, the prompt tokens read from
and written to the prompt cache included (:class:`~mockserver.service.exchange.Usage`). The cost uses the
fixture's ``pricing``: the model's standard price per million tokens times the tier's
multiplier (reasoning tokens are billed as output tokens, as they are part of them; prompt tokens
read from the prompt cache at the model's cached input price, and those written to it at its cache
write price, where the fixture gives them: the input price otherwise).

:func:`report` sums the rows into totals and breakdowns, optionally filtered, for
``GET /_mock/usage``. An organization's running spend is what its quota is checked against.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from mockserver.config.fixture import Fixture
from mockserver.errors.formats import mask_api_key
from mockserver.service.exchange import Exchange, Usage
from mockserver.state.store import Store, UsageEntry, UsageRow

MILLION = 1_000_000


def cost_usd(fixture: Fixture, model_id: str, tier: str, usage: Usage) -> float:
    """What ``usage`` costs: input at its price, but for tokens read from (or written to) the prompt
    cache, at the cached (or cache write) price where the model has one; output at its price."""
    price = fixture.pricing.price(model_id)
    cached, written = usage.cached_tokens, usage.cache_write_tokens
    base = (usage.input_tokens - cached - written) * price.input_per_million
    base += cached * _or(price.cached_input_per_million, price.input_per_million)
    base += written * _or(price.cache_write_per_million, price.input_per_million)
    base += usage.output_tokens * price.output_per_million
    return base * fixture.pricing.multiplier(tier, model_id) / MILLION


def _or(price: float | None, otherwise: float) -> float:
    return otherwise if price is None else price


def recorder(store: Store, fixture: Callable[[], Fixture]) -> Callable[[Exchange], Awaitable[None] | None]:
    """An ``on_complete`` hook that records completed inference replies: the store's write to await,
    or None (no coroutine at all) for an exchange that is not recorded."""

    def record(exchange: Exchange) -> Awaitable[None] | None:
        account, usage = exchange.account, exchange.usage
        if not exchange.completed or account is None or usage is None or exchange.model is None:
            return None
        tier = exchange.tier or "default"
        return store.record(
            UsageEntry(
                key=account.key,
                organization=account.organization,
                project=account.project,
                model=exchange.model,
                tier=tier,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                reasoning_tokens=usage.reasoning_tokens,
                cost_usd=cost_usd(fixture(), exchange.model, tier, usage),
                cached_tokens=usage.cached_tokens,
                cache_write_tokens=usage.cache_write_tokens,
                request_id=exchange.request_id,
            )
        )

    return record


@dataclass(frozen=True)
class UsageFilter:
    key: str | None = None
    model: str | None = None
    tier: str | None = None
    organization: str | None = None
    project: str | None = None

    def matches(self, row: UsageRow) -> bool:
        return all(
            wanted is None or wanted == actual
            for wanted, actual in (
                (self.key, row.key),
                (self.model, row.model),
                (self.tier, row.tier),
                (self.organization, row.organization),
                (self.project, row.project),
            )
        )


def totals(rows: Iterable[UsageRow]) -> dict[str, Any]:
    requests = input_tokens = output_tokens = reasoning_tokens = cached_tokens = cache_write_tokens = 0
    cost = 0.0
    for row in rows:
        requests += row.requests
        input_tokens += row.input_tokens
        output_tokens += row.output_tokens
        reasoning_tokens += row.reasoning_tokens
        cached_tokens += row.cached_tokens
        cache_write_tokens += row.cache_write_tokens
        cost += row.cost_usd
    return {
        "requests": requests,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "reasoning_tokens": reasoning_tokens,
        "cached_tokens": cached_tokens,
        "cache_write_tokens": cache_write_tokens,
        "total_tokens": input_tokens + output_tokens,
        "cost_usd": round(cost, 9),
    }


def report(usage: Iterable[UsageRow], selection: UsageFilter) -> dict[str, Any]:
    """Totals, breakdowns by key/model/tier/organization, and the raw rows, for the rows selected."""
    rows = sorted((r for r in usage if selection.matches(r)), key=lambda r: (r.key, r.model, r.tier))

    def by(attribute: str, show: Callable[[str], str] = str) -> dict[str, Any]:
        groups: dict[str, list[UsageRow]] = {}
        for row in rows:
            groups.setdefault(show(getattr(row, attribute)), []).append(row)
        return {name: totals(group) for name, group in sorted(groups.items())}

    return {
        "object": "usage",
        "currency": "usd",
        "filters": {k: mask_api_key(v) if k == "key" else v for k, v in vars(selection).items() if v is not None},
        "totals": totals(rows),
        # Keys are shown masked, as everywhere on the control plane; filter with the real key.
        "by_key": by("key", mask_api_key),
        "by_model": by("model"),
        "by_tier": by("tier"),
        "by_organization": by("organization"),
        "rows": [
            {
                "key": mask_api_key(r.key),
                "organization": r.organization,
                "project": r.project,
                "model": r.model,
                "tier": r.tier,
                **totals([r]),
            }
            for r in rows
        ],
    }
