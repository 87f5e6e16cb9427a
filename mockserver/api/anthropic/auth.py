"""Anthropic's request headers: the key in ``x-api-key`` (or ``Authorization: Bearer``, as the
SDKs send an ``auth_token``) and the required ``anthropic-version``.

The key is looked up in the same fixture accounts as OpenAI's, so one key works on both APIs
and shares its organization's quota, capacity and ledger.
"""

from __future__ import annotations

from collections.abc import Mapping

from mockserver.api.anthropic import errors
from mockserver.api.anthropic.family import API_KEY_HEADER, VERSION_HEADER
from mockserver.config.fixture import Account, Fixture
from mockserver.service import accounts


def api_key(headers: Mapping[str, str]) -> str | None:
    key = headers.get(API_KEY_HEADER, "").strip()
    return key or accounts.bearer_key(headers)


def authenticate(fixture: Fixture, headers: Mapping[str, str]) -> Account:
    """The caller's account, or the 401 / 400 Anthropic's API answers."""
    key = api_key(headers)
    if key is None:
        raise errors.missing_api_key()
    account = fixture.account(key)
    if account is None:
        raise errors.invalid_api_key()
    accounts.check_key(fixture, account, headers)
    if not headers.get(VERSION_HEADER, "").strip():
        raise errors.missing_version()
    return account
