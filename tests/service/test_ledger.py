"""Prices, the ledger's rows and report, and quota checks, without a server."""

from __future__ import annotations

import asyncio

import pytest

from mockserver import errors
from mockserver.config.fixture import Account, Fixture, load_fixture
from mockserver.service import accounts, ledger
from mockserver.service.exchange import Usage
from mockserver.state.store import MemoryStore, UsageEntry

FIXTURE = load_fixture()
MILLION = Usage(input_tokens=1_000_000, output_tokens=1_000_000, reasoning_tokens=200_000)


@pytest.mark.parametrize(
    ("tier", "cost"), [("default", 35.0), ("priority", 70.0), ("flex", 17.5), ("ultrafast", 175.0)]
)
def test_gpt_5_6_sol_prices_per_tier(tier: str, cost: float) -> None:
    # $5 per M input + $30 per M output on standard; reasoning tokens are part of the output.
    assert ledger.cost_usd(FIXTURE, "gpt-5.6-sol", tier, MILLION) == pytest.approx(cost)


def test_unlisted_models_use_the_default_price() -> None:
    assert ledger.cost_usd(FIXTURE, "no-such-model", "default", MILLION) == 0


def entry(
    key: str = "sk-key-alpha", model: str = "gpt-5.6-sol", tier: str = "default", org: str = "org-a"
) -> UsageEntry:
    return UsageEntry(key, org, "proj", model, tier, input_tokens=10, output_tokens=20, reasoning_tokens=5,
                      cost_usd=0.5, cached_tokens=4, cache_write_tokens=2)  # fmt: skip


def test_report_totals_breakdowns_and_filters() -> None:
    store = MemoryStore()
    for e in [entry(), entry(), entry(tier="priority"), entry(key="sk-key-bravo", model="gpt-5.6-mini", org="org-b")]:
        asyncio.run(store.record(e))
    everything = ledger.report(asyncio.run(store.usage()), ledger.UsageFilter())
    assert everything["totals"] == {
        "requests": 4, "input_tokens": 40, "output_tokens": 80, "reasoning_tokens": 20, "cached_tokens": 16,
        "cache_write_tokens": 8, "total_tokens": 120, "cost_usd": 2.0,
    }  # fmt: skip
    # Keys are shown masked; the report is filtered with the real key.
    assert everything["by_key"]["sk-key***lpha"]["requests"] == 3
    assert all("sk-key-alpha" not in str(row) for row in everything["rows"])
    assert everything["by_tier"]["priority"]["requests"] == 1
    assert everything["by_organization"]["org-b"]["input_tokens"] == 10
    assert everything["by_model"]["gpt-5.6-mini"]["cached_tokens"] == 4
    assert [(r["cached_tokens"], r["cache_write_tokens"]) for r in everything["rows"]] == [(8, 4), (4, 2), (4, 2)]
    assert len(everything["rows"]) == 3
    only = ledger.report(asyncio.run(store.usage()), ledger.UsageFilter(key="sk-key-alpha", tier="default"))
    assert only["totals"]["requests"] == 2 and only["filters"] == {"key": "sk-key***lpha", "tier": "default"}
    asyncio.run(store.reset())
    assert ledger.report(asyncio.run(store.usage()), ledger.UsageFilter())["totals"]["requests"] == 0


def quota_fixture(**quota: object) -> Fixture:
    data = load_fixture().model_dump()
    data["organizations"] = [{"id": "org-a", "quota": quota}]
    return Fixture.model_validate(data)


def test_quota_by_spend_lets_the_crossing_reply_finish_then_refuses() -> None:
    store, fx, acct = MemoryStore(), quota_fixture(spend_usd=1.0), Account(key="sk-a", organization="org-a")
    asyncio.run(accounts.check_quota(store, fx, acct))
    asyncio.run(store.record(entry()))  # $0.5
    asyncio.run(accounts.check_quota(store, fx, acct))
    asyncio.run(store.record(entry()))  # $1.0: the budget is spent
    with pytest.raises(errors.RateLimitError) as caught:
        asyncio.run(accounts.check_quota(store, fx, acct))
    error = caught.value
    assert (error.type, error.code, error.headers) == ("insufficient_quota", "insufficient_quota",
                                                       {"x-should-retry": "false"})  # fmt: skip
    assert error.message.startswith("You exceeded your current quota, please check your plan and billing details.")
    asyncio.run(
        accounts.check_quota(store, fx, Account(key="sk-b", organization="org-b"))
    )  # other organizations are unaffected


def test_quota_by_tokens() -> None:
    store, fx, acct = MemoryStore(), quota_fixture(tokens=30), Account(key="sk-a", organization="org-a")
    asyncio.run(store.record(entry()))  # 10 input + 20 output
    with pytest.raises(errors.RateLimitError):
        asyncio.run(accounts.check_quota(store, fx, acct))
