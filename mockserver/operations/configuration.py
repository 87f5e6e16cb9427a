"""Runtime configuration: the document behind ``GET`` / ``PATCH /_mock/config``.

The document is the fixture (profiles, models, accounts, policies, faults, scripts, ...)
plus the runtime settings ``time_scale`` and ``seed``, flat at the top level.
A change is a JSON merge patch (RFC 7396): objects merge key by key, lists and
scalars replace, and ``null`` puts a field back to its default. The merged
document is validated against the fixture schema as a whole and then swapped in
with one assignment, so a request sees either the old configuration or the new
one; an invalid patch changes nothing and is refused with a 400 naming the field.

API keys are masked in the document shown (accounts and fault rules alike), so
to change ``accounts``, send the whole list with its real keys.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from mockserver import errors
from mockserver.config import suggestions
from mockserver.config.documents import merge_patch
from mockserver.config.fixture import ConfigError, Fixture
from mockserver.config.presets import PresetError, merge_presets
from mockserver.config.settings import Settings
from mockserver.harness.masking import Masker
from mockserver.harness.replay import options as replay

RUNTIME_FIELDS = ("time_scale", "seed")
FIXED_SETTINGS = (
    "host",
    "port",
    "config",
    "log_level",
    "journal_size",
    "journal_bytes",
    "max_body_bytes",
    "max_json_depth",
    "max_time_scale",
    "max_reply_seconds",
    "stored_responses",
    "stored_response_ttl",
    "stored_response_bytes",
    "admin_token",
    "insecure_control_plane",
    "shutdown_grace",
    "port_file",
    "quiet",
    "state",
    "workers",
    "upstream",
)


def document(settings: Settings, fixture: Fixture) -> dict[str, Any]:
    """The configuration as plain JSON data, faults written in their one-line form. Keys not masked."""
    data: dict[str, Any] = {"time_scale": settings.time_scale, "seed": settings.seed}
    data.update(fixture.model_dump(mode="json"))
    faults = data["faults"]
    faults["choices"] = [spec.describe() for spec in fixture.faults.choices]
    for rule, shown in zip(fixture.faults.rules, faults["rules"], strict=True):
        shown["fault"] = rule.fault.describe()
        shown["match"] = {k: v for k, v in shown["match"].items() if v is not None}
    data["scripts"] = [rule.model_dump(mode="json", exclude_none=True) for rule in fixture.scripts]
    return data


def masked_document(settings: Settings, fixture: Fixture) -> dict[str, Any]:
    masker = Masker(account.key for account in fixture.accounts)
    result: dict[str, Any] = masker.body(document(settings, fixture))
    return result


def apply_patch(
    settings: Settings, fixture: Fixture, patch: Any, *, initial: Settings | None = None
) -> tuple[Settings, Fixture]:
    """The configuration after ``patch``, validated whole; raises an OpenAI-shaped 400 otherwise.

    ``null`` for ``time_scale`` or ``seed`` puts back the value in ``initial`` (the server's start).
    """
    if not isinstance(patch, dict):
        raise errors.InvalidRequestError("The configuration patch must be a JSON object.", code="invalid_type")
    for name in FIXED_SETTINGS:
        if name in patch:
            raise errors.InvalidRequestError(
                f"'{name}' cannot be changed at runtime; restart the server with a new value.",
                param=name,
                code="invalid_value",
            )
    merged = merge_patch(document(settings, fixture), patch)
    runtime = {name: merged.pop(name, None) for name in RUNTIME_FIELDS}
    new_settings = _runtime_settings(settings, runtime, initial or settings)
    added = [name for name in merged.get("presets") or [] if name not in fixture.presets]
    try:
        if added:  # a preset named in the patch brings its models and prices, as at start-up
            merged = {**merge_presets(merged, added), "presets": merged["presets"]}
        new_fixture = Fixture.model_validate(merged)
    except PresetError as exc:
        raise errors.InvalidRequestError(str(exc), param="presets", code="invalid_value") from None
    except ValidationError as exc:
        raise _invalid(exc) from None
    try:
        new_fixture = replay.checked(new_fixture)  # a cassette that does not load is refused here
    except ConfigError as exc:
        raise errors.InvalidRequestError(str(exc), param="replay", code="invalid_value") from None
    return new_settings, new_fixture


def difference(before: Any, after: Any) -> Any:
    """The merge patch (RFC 7396) that turns ``before`` into ``after``: changed keys, ``null`` for removed ones.

    Lists and scalars are replaced whole, as a merge patch does. Used to fold a long history of
    patches into one (:meth:`mockserver.server_state.ServerState.configure_everywhere`)."""
    if not (isinstance(before, dict) and isinstance(after, dict)):
        return after
    patch: dict[str, Any] = {key: None for key in before if key not in after}
    for key, value in after.items():
        if key not in before:
            patch[key] = value
        elif before[key] != value:
            patch[key] = difference(before[key], value)
    return patch


def _runtime_settings(settings: Settings, runtime: dict[str, Any], initial: Settings) -> Settings:
    time_scale = initial.time_scale if runtime["time_scale"] is None else runtime["time_scale"]
    seed = initial.seed if runtime["seed"] is None else runtime["seed"]
    ceiling = settings.max_time_scale
    if isinstance(time_scale, bool) or not isinstance(time_scale, int | float) or not 0 <= time_scale <= ceiling:
        raise errors.InvalidRequestError(
            f"Invalid value for 'time_scale': {time_scale!r}. Expected a number from 0 to {ceiling:g} "
            "(max_time_scale, MOCKSERVER_MAX_TIME_SCALE).",
            param="time_scale",
            code="invalid_value",
        )
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise errors.InvalidRequestError(
            f"Invalid value for 'seed': {seed!r}. Expected an integer.", param="seed", code="invalid_value"
        )
    try:
        return settings.with_overrides(time_scale=float(time_scale), seed=seed)
    except ConfigError as exc:  # pragma: no cover - the checks above come first
        raise errors.InvalidRequestError(str(exc), param="time_scale", code="invalid_value") from None


def _invalid(exc: ValidationError) -> errors.InvalidRequestError:
    problems = exc.errors()
    # A misspelled required field is two problems, the field missing and an unknown one: the unknown
    # one is the cause, so it is the one answered (with the closest known name).
    first = next((e for e in problems if e["type"] == "extra_forbidden"), problems[0])
    param = ".".join(str(p) for p in first["loc"]) or None
    if first["type"] == "extra_forbidden":
        loc = first["loc"]
        extra = RUNTIME_FIELDS if len(loc) == 1 else ()
        unknown = suggestions.describe_unknown(Fixture, loc, extra)
        message = f"Unrecognized configuration field: '{param}': {suggestions.sentence(unknown)}"
        code = "unknown_parameter"
    else:
        details = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(top level)'}: {e['msg'].removeprefix('Value error, ')}"
            for e in problems
        )
        message = f"Invalid configuration: {details}."
        code = "invalid_value"
    return errors.InvalidRequestError(message, param=param, code=code)
