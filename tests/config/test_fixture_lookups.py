"""A fixture's lookups by id (key, model, organization) agree with its lists, however it was made."""

from __future__ import annotations

import copy
import pickle

from mockserver.config.fixture import Account, Fixture, Organization, load_fixture


def _with_accounts(fixture: Fixture, count: int) -> Fixture:
    data = fixture.model_dump()
    data["accounts"] += [{"key": f"sk-mock-extra-{n}", "organization": f"org-extra-{n}"} for n in range(count)]
    data["organizations"] += [{"id": f"org-extra-{n}"} for n in range(count)]
    return Fixture.model_validate(data)


def test_lookups_find_what_the_lists_declare() -> None:
    fixture = load_fixture()
    for account in fixture.accounts:
        assert fixture.account(account.key) is account
    for model in fixture.models:
        assert fixture.model(model.id) is model
    for organization in fixture.organizations:
        assert fixture.organization(organization.id) is organization
    assert fixture.account("sk-not-declared") is None
    assert fixture.model("no-such-model") is None
    assert fixture.organization("org-not-declared") == Organization(id="org-not-declared")


def test_a_large_fixture_finds_its_last_account() -> None:
    fixture = _with_accounts(load_fixture(), 5_000)
    last = fixture.account("sk-mock-extra-4999")
    assert isinstance(last, Account) and last.organization == "org-extra-4999"
    assert fixture.organization("org-extra-4999").id == "org-extra-4999"


def test_a_copy_with_other_lists_looks_up_its_own() -> None:
    fixture = load_fixture()
    assert fixture.account(fixture.accounts[1].key) is not None  # the original's lookups are built
    copied = fixture.model_copy(update={"accounts": fixture.accounts[:1]})
    assert copied.account(fixture.accounts[1].key) is None
    assert copied.account(fixture.accounts[0].key) is fixture.accounts[0]
    assert fixture.account(fixture.accounts[1].key) is fixture.accounts[1]


def test_lookups_leave_equality_dumps_and_copies_alone() -> None:
    fixture, fresh = load_fixture(), load_fixture()
    fixture.account(fixture.accounts[0].key)
    assert fixture == fresh
    assert fixture.model_dump() == fresh.model_dump()
    assert fixture.model_dump_json() == fresh.model_dump_json()
    for other in (copy.deepcopy(fixture), pickle.loads(pickle.dumps(fixture))):
        assert other == fresh
        assert other.account(fixture.accounts[0].key) == fixture.accounts[0]
