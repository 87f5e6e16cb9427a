"""Key status, organization/project headers and region blocks, in the live API's order."""

from __future__ import annotations

import asyncio

import pytest

from mockserver import errors
from mockserver.config.fixture import load_fixture
from mockserver.service import access, accounts

FIXTURE = load_fixture()


def auth(key: str, **headers: str) -> None:
    access.authenticate(FIXTURE, {"authorization": f"Bearer {key}", **headers})


@pytest.mark.parametrize(
    ("key", "headers", "status", "code"),
    [
        ("sk-mock-revoked", {}, 401, "invalid_api_key"),
        ("sk-mock-deactivated", {}, 401, "account_deactivated"),
        ("sk-mock-preview", {"openai-organization": "org-other"}, 401, "mismatched_organization"),
        ("sk-mock-preview", {"openai-project": "proj_other"}, 401, "mismatched_project"),
        ("sk-mock-region-blocked", {}, 403, "unsupported_country_region_territory"),
        # The key's own status comes first, whatever the headers say.
        ("sk-mock-revoked", {"openai-organization": "org-other"}, 401, "invalid_api_key"),
    ],
)
def test_refusals(key: str, headers: dict[str, str], status: int, code: str) -> None:
    with pytest.raises(errors.MockAPIError) as caught:
        auth(key, **headers)
    assert (caught.value.status_code, caught.value.code) == (status, code)


def test_matching_headers_are_accepted() -> None:
    auth("sk-mock-preview", **{"openai-organization": "org-mock-preview", "openai-project": "proj_mock_preview"})


def test_identify_labels_only_usable_keys() -> None:
    assert accounts.identify(FIXTURE, {"authorization": "Bearer sk-mock-standard"}).key == "sk-mock-standard"  # type: ignore[union-attr]
    assert accounts.identify(FIXTURE, {"authorization": "Bearer sk-mock-revoked"}) is None
    assert accounts.identify(FIXTURE, {"authorization": "Basic abc"}) is None


def test_a_project_limited_to_some_models_gets_403_on_the_others() -> None:
    account = FIXTURE.account("sk-mock-mini-only")
    assert account is not None
    with pytest.raises(errors.PermissionDeniedError) as caught:
        asyncio.run(access.admission(FIXTURE, account, {}, "gpt-5.6-sol", None))
    assert caught.value.message == "Project `proj_mock_mini_only` does not have access to model `gpt-5.6-sol`"
    assert caught.value.code == "model_not_found"
    assert asyncio.run(access.admission(FIXTURE, account, {}, "gpt-5.6-mini", None)).model.id == "gpt-5.6-mini"
    assert [m.id for m in access.visible_models(FIXTURE, account)] == ["gpt-5.6-mini"]
