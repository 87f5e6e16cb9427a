"""What each key may do, and how much of it is left right now: the dashboard's accounts view.

For every key of the fixture: its organization and project, status, tiers, the models it may
see, and for each of those models and tiers the request and token windows it counts against
(:mod:`mockserver.service.ratelimits`) with what is left of them now, plus its organization's
quota and spend. Windows shared by several tiers (priority and flex share standard's) are read
once. Keys are masked.
"""

from __future__ import annotations

from typing import Any

from mockserver.config.fixture import Account, Fixture
from mockserver.harness.masking import Masker
from mockserver.service import access, ratelimits
from mockserver.state.store import Store


async def accounts(store: Store, fixture: Fixture, now: float) -> list[dict[str, Any]]:
    """One entry per key of ``fixture``, with its windows as they stand at ``now`` (the server's clock)."""
    masker = Masker(account.key for account in fixture.accounts)
    shown = []
    for account in fixture.accounts:
        shown.append(
            {
                "key": masker.secret_value(account.key),
                "organization": account.organization,
                "project": account.project,
                "status": account.status,
                "tiers": list(account.tiers),
                "models": [m.id for m in access.visible_models(fixture, account)],
                "windows": await _windows(store, fixture, account, now) if account.status == "active" else [],
                "quota": await _quota(store, fixture, account),
            }
        )
    return shown


async def _windows(store: Store, fixture: Fixture, account: Account, now: float) -> list[dict[str, Any]]:
    windows: list[dict[str, Any]] = []
    seen: dict[str, dict[str, Any]] = {}
    for model in access.visible_models(fixture, account):
        for tier in model.tiers:
            if tier not in account.tiers:
                continue
            target = ratelimits.model_target(fixture, account, model.id, tier)
            if target.requests_bucket in seen:
                seen[target.requests_bucket]["tiers"].append(tier)
                continue
            requests = await store.window(now, target.requests_bucket, target.limits.rpm)
            tokens = await store.window(now, target.tokens_bucket, target.limits.tpm)
            window = {
                "model": model.id,
                "tiers": [tier],
                "rpm": target.limits.rpm,
                "requests_left": requests.remaining,
                "tpm": target.limits.tpm,
                "tokens_left": tokens.remaining,
            }
            seen[target.requests_bucket] = window
            windows.append(window)
    return windows


async def _quota(store: Store, fixture: Fixture, account: Account) -> dict[str, Any] | None:
    quota = fixture.organization(account.organization).quota
    if quota.spend_usd is None and quota.tokens is None:
        return None
    spent = await store.spend(account.organization)
    return {
        "spend_usd": quota.spend_usd,
        "tokens": quota.tokens,
        "spent_usd": round(spent.cost_usd, 6),
        "spent_tokens": spent.tokens,
    }
