"""Who is calling and what they may see: API keys, model visibility and admission.

:func:`admit` is the one gate every inference request passes: it authenticates
the key, finds the model the key may see, and resolves the service tier. Each
refusal is a typed error from :mod:`mockserver.errors` with the live wording.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from mockserver import errors
from mockserver.config import Account, Fixture, ModelSpec, TimingProfile
from mockserver.tiers import Overrides, TierDecision, resolve_tier


def bearer_key(headers: Mapping[str, str]) -> str | None:
    """The API key from ``Authorization: Bearer <key>``, or None when absent."""
    value = headers.get("authorization", "").strip()
    scheme, _, key = value.partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        return None
    return key.strip()


def authenticate(fixture: Fixture, headers: Mapping[str, str]) -> Account:
    key = bearer_key(headers)
    if key is None:
        raise errors.missing_api_key()
    account = fixture.account(key)
    if account is None:
        raise errors.invalid_api_key(key)
    return account


def can_see(account: Account, model: ModelSpec) -> bool:
    """Whether the key may see a model. Ultrafast-only ids need preview access."""
    if account.models is not None and model.id not in account.models:
        return False
    return model.forced_tier is None or model.forced_tier in account.tiers


def visible_models(fixture: Fixture, account: Account) -> list[ModelSpec]:
    return [m for m in fixture.models if can_see(account, m)]


def find_model(fixture: Fixture, account: Account, model_id: str) -> ModelSpec:
    model = fixture.model(model_id)
    if model is None or not can_see(account, model):
        raise errors.model_not_found(model_id)
    return model


@dataclass(frozen=True)
class Admission:
    """Everything decided about a request before any token is produced."""

    account: Account
    model: ModelSpec
    tier: TierDecision
    profile: TimingProfile
    overrides: Overrides


def admit(
    fixture: Fixture, account: Account, headers: Mapping[str, str], model_id: str, service_tier: str | None
) -> Admission:
    """Find the model and resolve the tier for an authenticated key, or raise the refusal."""
    overrides = Overrides.from_headers(headers)
    model = find_model(fixture, account, model_id)
    decision = resolve_tier(fixture, account, model, service_tier)
    profile = overrides.apply(fixture.profile(model, decision.tier))
    return Admission(account, model, decision, profile, overrides)
