"""Who is calling and what they may do: API keys, model visibility and admission.

:func:`authenticate` finds the key's account and refuses it as the live API would
(:mod:`mockserver.service.accounts`). The gate every inference request passes is
:func:`resolve` (the model the key may use and the service tier), then :func:`take_resources`
(:func:`admission` is both in one call): with the
request's :class:`Resources` (its exchange and the server's store, passed down by the serving
path), checks the organization's quota, takes an Ultrafast capacity slot (or downgrades) and
counts the request against the rate windows. Each refusal is a typed
error from :mod:`mockserver.errors` with the live wording.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass, replace
from typing import NamedTuple

from mockserver import errors
from mockserver.config.fixture import Account, Fixture, ModelAPI, ModelKind, ModelSpec, Tier, TimingProfile
from mockserver.engine.pacing import Clock
from mockserver.service import accounts, capacity, model_hints, ratelimits
from mockserver.service.accounts import bearer_key
from mockserver.service.capacity import queue as capacity_queue
from mockserver.service.exchange import Exchange
from mockserver.service.per_fixture import PerFixture
from mockserver.service.prompt_cache import NO_CACHE, CacheUse
from mockserver.service.tiers import Overrides, TierDecision, resolve_tier
from mockserver.state.store import Store

__all__ = [
    "Admission",
    "admission",
    "authenticate",
    "bearer_key",
    "can_see",
    "find_model",
    "resolve",
    "take_resources",
    "visible_models",
]


def authenticate(fixture: Fixture, headers: Mapping[str, str]) -> Account:
    key = bearer_key(headers)
    if key is None:
        raise errors.missing_api_key()
    account = fixture.account(key)
    if account is None:
        raise errors.invalid_api_key(key)
    accounts.check_key(fixture, account, headers)
    return account


def can_see(account: Account, model: ModelSpec) -> bool:
    """Whether the key may see a model. Ultrafast-only ids need preview access."""
    if account.models is not None and model.id not in account.models:
        return False
    return model.forced_tier is None or model.forced_tier in account.tiers


def visible_models(fixture: Fixture, account: Account, api: ModelAPI = "openai") -> list[ModelSpec]:
    """The models the key may see on one API (each model is served by one: OpenAI's or Anthropic's)."""
    return [m for m in fixture.models if m.api == api and can_see(account, m)]


def find_model(fixture: Fixture, account: Account, model_id: str, api: ModelAPI = "openai") -> ModelSpec:
    model = fixture.model(model_id)
    if model is None or model.api != api or not can_see(account, model):
        raise _not_found(fixture, account, model_id, api)
    return model


def _not_found(fixture: Fixture, account: Account, model_id: str, api: ModelAPI) -> errors.NotFoundError:
    """The live 404; for an id the fixture does not have, with the one the caller likely meant among
    those the key may see (:mod:`.model_hints`). A model hidden from the key gets the live words alone."""
    if fixture.model(model_id) is not None:
        return errors.model_not_found(model_id)
    visible = [m.id for m in visible_models(fixture, account, api)]
    return errors.model_not_found(model_id, model_hints.hint(fixture, model_id, api, visible))


def inference_model(
    fixture: Fixture, account: Account, model_id: str, api: ModelAPI = "openai", kind: ModelKind = "chat"
) -> ModelSpec:
    """The model for an inference request: 404 if unknown, hidden or served by another API, 403 if the
    project may not use it, and the live refusal if it is of another ``kind`` than the endpoint serves."""
    model = fixture.model(model_id)
    if model is None or model.api != api or (model.forced_tier is not None and model.forced_tier not in account.tiers):
        raise _not_found(fixture, account, model_id, api)
    if account.models is not None and model.id not in account.models:
        raise errors.project_model_access(account.project, model.id)
    if model.kind != kind:
        raise errors.wrong_model_kind(model.id, kind)
    return model


@dataclass(slots=True)
class Admission:
    """Everything decided about a request before any token is produced.

    Never changed once made (:func:`dataclasses.replace` makes another), but not a frozen dataclass:
    one is made for every request, and a frozen one sets each of its fields through
    ``object.__setattr__``, which costs several times as much. With slots: one object rather than two
    (itself and its ``__dict__``) for as long as its reply lasts, quicker to make and to read.
    """

    account: Account
    model: ModelSpec
    tier: TierDecision
    profile: TimingProfile
    overrides: Overrides
    received_at: float | None = None  # when the request arrived, on the server clock
    cache: CacheUse = NO_CACHE  # the prompt tokens read from and written to the prompt cache
    # What taking its shared resources reads of the fixture, found with the tier resolved (:func:`resolve`);
    # None: looked up when they are taken.
    shared: Shared | None = None

    def start_time(self, clock: Clock) -> float:
        """Where the reply's schedule starts: at the request's arrival, so the time spent parsing
        and generating is part of the TTFT instead of being added to it."""
        return self.received_at if self.received_at is not None else clock.now()


class Shared(NamedTuple):
    """What :func:`take_resources` reads of ``fixture`` for a key, a model and the tier resolved: whether
    the key's organization has a quota to check, and the rate windows the request counts in. The same for
    every request resolved alike, so :func:`resolve` finds it once with the rest (one lookup per request
    instead of two). (A named tuple: read on every request, made once per key, model and tier.)"""

    fixture: Fixture
    quota: bool
    target: ratelimits.Target


def _shared(fixture: Fixture, account: Account, model_id: str, tier: Tier) -> Shared:
    """:class:`Shared` for a key's ``account``, a model and a tier, in ``fixture``."""
    return Shared(
        fixture, accounts.has_quota(fixture, account), ratelimits.model_target(fixture, account, model_id, tier)
    )


class _Resolved:
    """What :func:`resolve` finds for a key, a model id and a tier asked for.

    ``applied`` is the profile with the overrides of the last request that came this way: a test run
    sends the same ``x-mock-*`` headers request after request (:meth:`Overrides.from_headers` gives
    the same object for the same values), and applying them looks the profile up by its hash, which
    a pydantic model works out anew each time.
    """

    __slots__ = ("account", "applied", "model", "profile", "shared", "tier")

    def __init__(
        self, account: Account, model: ModelSpec, tier: TierDecision, profile: TimingProfile, shared: Shared
    ) -> None:
        self.account = account
        self.model = model
        self.tier = tier
        self.profile = profile  # the tier's, before any overrides
        self.shared = shared
        self.applied: tuple[Overrides | None, TimingProfile] = (None, profile)


# What resolve finds depends only on the fixture, the key, the model id and the tier asked for, so it
# is worked out once per fixture rather than on every request. Bounded by what the fixture declares:
# only a model the key may use and a tier it may have are kept (a refusal is raised again each time).
# Each entry keeps the account it was found for, as the rate windows' do (:mod:`.ratelimits`).
_RESOLVED: PerFixture[tuple[str, str, str | None, ModelAPI, ModelKind], _Resolved] = PerFixture()


def resolve(
    fixture: Fixture,
    account: Account,
    headers: Mapping[str, str],
    model_id: str,
    service_tier: str | None,
    *,
    received_at: float | None = None,
    api: ModelAPI = "openai",
    kind: ModelKind = "chat",
) -> Admission:
    """Find the model and resolve the tier for an authenticated key, or raise the refusal.

    Has no side effects: nothing is counted or held until :func:`take_resources`.
    """
    overrides = Overrides.from_headers(headers)
    key = (account.key, model_id, service_tier, api, kind)
    found = _RESOLVED.find(fixture, key)
    if found is None or found.account is not account:
        model = inference_model(fixture, account, model_id, api, kind)
        decision = resolve_tier(fixture, account, model, service_tier)
        shared = _shared(fixture, account, model.id, decision.tier)
        found = _Resolved(account, model, decision, fixture.profile(model, decision.tier), shared)
        _RESOLVED.put(fixture, key, found)
    applied_for, profile = found.applied
    if applied_for is not overrides:
        profile = overrides.apply(found.profile)
        found.applied = (overrides, profile)
    return Admission(account, found.model, found.tier, profile, overrides, received_at, NO_CACHE, found.shared)


class Resources(NamedTuple):
    """Where one request's admission is counted and held: its exchange (which keeps the rate-limit
    headers and the capacity slot), the server's store, its clock, and the time scale the waits of
    refusals follow. (A named tuple: one is made for every request.)"""

    exchange: Exchange
    store: Store
    clock: Clock
    time_scale: float = 1.0


def take_resources(
    fixture: Fixture,
    admission: Admission,
    *,
    request: Resources | None = None,
    queue: capacity_queue.Queue | None = None,
    prompt_tokens: int | None = None,
    requested_tokens: int | None = None,
) -> Awaitable[Admission]:
    """Check the quota, take an Ultrafast slot (or downgrade) and count the request against the
    rate windows, in ``request``'s store. Returns the admission as served: its tier and profile
    change on a downgrade. Without ``request`` (a unit test of the rules alone) nothing is counted
    or held, and the admission is returned as it is. With a ``queue``, a request waits there while
    the Ultrafast pools are full. ``prompt_tokens``: the prompt as already counted, for the token
    window (else it is counted here). ``requested_tokens`` replaces the whole cost in the token
    window (prompt and most output, worked out from the body by
    :func:`mockserver.service.ratelimits.requested_tokens`): an embeddings request gives its input tokens.
    (What to await: every request's path takes one coroutine less.)
    """
    if request is None:
        return _as_it_is(admission)
    return _take_shared_resources(request, fixture, admission, queue, prompt_tokens, requested_tokens)


async def _as_it_is(admission: Admission) -> Admission:
    """``admission``, to await: nothing taken."""
    return admission


async def admission(
    fixture: Fixture,
    account: Account,
    headers: Mapping[str, str],
    model_id: str,
    service_tier: str | None,
    *,
    request: Resources | None = None,
) -> Admission:
    """:func:`resolve`, then :func:`take_resources`: the whole gate in one call."""
    received_at = request.exchange.started_at if request is not None else None
    resolved = resolve(fixture, account, headers, model_id, service_tier, received_at=received_at)
    return await take_resources(fixture, resolved, request=request)


async def _take_shared_resources(
    request: Resources,
    fixture: Fixture,
    admission: Admission,
    queue: capacity_queue.Queue | None = None,
    prompt_tokens: int | None = None,
    requested_tokens: int | None = None,
) -> Admission:
    """Quota, then an Ultrafast slot (which may downgrade the tier), then the rate windows of the tier served;
    the admission as served (:func:`take_resources`).

    Whatever the outcome, the exchange keeps the model's ``x-ratelimit-*`` headers as of now.
    A request refused by the rate limit gives its slot back at once; an admitted one keeps it
    on the exchange until the reply ends (:func:`mockserver.api.serving.respond`).
    """
    exchange, store, now = request.exchange, request.store, request.clock.now()
    account, model, decision = admission.account, admission.model, admission.tier
    shared = admission.shared
    if shared is None or shared.fixture is not fixture:  # not resolved, or resolved before the fixture changed
        shared = _shared(fixture, account, model.id, decision.tier)
    slot = None
    try:
        if shared.quota:  # most have none: no store call to await
            await accounts.check_quota(store, fixture, account)
        if decision.tier == "ultrafast":

            def noted(outcome: capacity_queue.Outcome, waited: float) -> None:
                exchange.queue_outcome = outcome
                exchange.queued_ms = round(waited * 1000, 3)

            slot = await capacity.acquire(
                store, fixture, account.organization, model.id, request.time_scale, queue=queue, noted=noted
            )
            if slot is None:
                decision = TierDecision(decision.requested, "default", downgraded=True)
        requested = (  # the body was parsed once, by the route
            ratelimits.requested_tokens(fixture, exchange.body, prompt_tokens)
            if requested_tokens is None
            else requested_tokens
        )
        target = (  # the tier's windows, found with it; a downgraded request counts in the default tier's
            shared.target
            if decision is admission.tier
            else ratelimits.model_target(fixture, account, model.id, decision.tier)
        )
        exchange.rate_limit_headers, refused = await ratelimits.take(
            store,
            now,
            fixture,
            account,
            model.id,
            target,
            requested,
            time_scale=request.time_scale,
            request_id=exchange.request_id,
        )
        if refused is not None:  # the headers as of the refusal came with it: nothing more to ask the store
            raise refused
    except errors.MockAPIError:
        if slot is not None:
            await slot.released()
        if not exchange.rate_limit_headers:  # refused before the rate windows (a quota, a 413)
            with contextlib.suppress(errors.MockAPIError):  # the store may be what failed: no headers then
                target = ratelimits.model_target(fixture, account, model.id, decision.tier)
                exchange.rate_limit_headers = await ratelimits.headers(store, now, target)
        raise
    except BaseException:
        if slot is not None:  # cancelled, or a bug: the slot is not left taken behind the cap
            slot.release()
        raise
    exchange.capacity_slot = slot
    if decision is admission.tier:  # the same object unless a downgrade made another
        return admission
    profile = admission.overrides.apply(fixture.profile(model, decision.tier))
    return replace(admission, tier=decision, profile=profile, shared=None)  # another tier: other windows
