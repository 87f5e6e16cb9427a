"""API keys and the organizations behind them: key status, header checks, region, quota.

A key (``accounts[]`` in the fixture) belongs to one organization and one project.
:func:`check_key` refuses it the way the live API does, in this order:

============================================  ======  ==============================
situation                                     status  ``code``
============================================  ======  ==============================
key ``status: revoked``                       401     ``invalid_api_key``
key ``status: deactivated``                   401     ``account_deactivated``
``OpenAI-Organization`` is another org        401     ``mismatched_organization``
``OpenAI-Project`` is another project         401     ``mismatched_project``
organization ``region_blocked``               403     ``unsupported_country_region_territory``
============================================  ======  ==============================

:func:`check_quota` answers 429 ``insufficient_quota`` once the organization has spent its
``quota`` (the reply that crosses the line still completes, as prepaid credit does).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

from mockserver import errors
from mockserver.config.fixture import Account, Fixture
from mockserver.state.store import Store

ORGANIZATION_HEADER = "openai-organization"
PROJECT_HEADER = "openai-project"


def bearer_key(headers: Mapping[str, str]) -> str | None:
    """The API key from ``Authorization: Bearer <key>``, or None when absent."""
    return _bearer(headers.get("authorization", ""))


# Each request's key is read several times (to label it, to authenticate it, for its reply's headers),
# and a test run sends the same few keys: what a header value gives is remembered. Bounded, as the
# values are the client's.
@functools.lru_cache(maxsize=256)
def _bearer(header: str) -> str | None:
    scheme, _, key = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        return None
    return key.strip()


def request_key(headers: Mapping[str, str]) -> str | None:
    """The key a request carries, for either API: ``Authorization: Bearer``, else Anthropic's ``x-api-key``.

    For labelling a request (journal, faults, reply headers); each API authenticates with its own header.
    """
    return bearer_key(headers) or headers.get("x-api-key", "").strip() or None


def identify(fixture: Fixture, headers: Mapping[str, str]) -> Account | None:
    """The active account behind a request's key, without raising; used to label any reply."""
    key = request_key(headers)
    account = fixture.account(key) if key else None
    return account if account is not None and account.status == "active" else None


def check_key(fixture: Fixture, account: Account, headers: Mapping[str, str]) -> None:
    """Raise the live API's refusal for a key that exists but may not be used as sent."""
    status = account.status  # read once: a pydantic model's attributes are slower reads than a local's
    if status == "revoked":
        raise errors.revoked_api_key(account.key)
    if status == "deactivated":
        raise errors.account_deactivated()
    organization = headers.get(ORGANIZATION_HEADER, "").strip()
    if organization and organization != account.organization:
        raise errors.mismatched_organization()
    project = headers.get(PROJECT_HEADER, "").strip()
    if project and project != account.project:
        raise errors.mismatched_project()
    if fixture.organization(account.organization).region_blocked:
        raise errors.unsupported_region()


def has_quota(fixture: Fixture, account: Account) -> bool:
    """Whether the key's organization has a quota (:func:`check_quota` has something to check)."""
    quota = fixture.organization(account.organization).quota
    return quota.spend_usd is not None or quota.tokens is not None


async def check_quota(store: Store, fixture: Fixture, account: Account) -> None:
    quota = fixture.organization(account.organization).quota
    if quota.spend_usd is None and quota.tokens is None:
        return
    spent = await store.spend(account.organization)
    if (quota.spend_usd is not None and spent.cost_usd >= quota.spend_usd) or (
        quota.tokens is not None and spent.tokens >= quota.tokens
    ):
        raise errors.insufficient_quota()
