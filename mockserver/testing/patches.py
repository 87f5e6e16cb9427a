"""Keyword conveniences for ``PATCH /_mock/config``: :func:`config_patch`.

``tokens_per_second=...``, ``faults=[...]`` and ``scripts=[...]`` become the merge patch the
control plane takes, so ``MockServer.configure`` and the ``mockserver`` fixture's ``configure``
read like the setting they change.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mockserver.config import suggestions
from mockserver.config.fixture import Fixture
from mockserver.operations.configuration import RUNTIME_FIELDS

TIERS = ("default", "priority", "flex", "ultrafast")
CONVENIENCES = ("tokens_per_second", "ttft_ms", "faults", "scripts")
# What a keyword may name: a convenience, a runtime setting or a field of the fixture.
KNOWN = frozenset([*CONVENIENCES, *RUNTIME_FIELDS, *Fixture.model_fields])


def config_patch(patch: Mapping[str, Any] | None = None, /, **changes: Any) -> dict[str, Any]:
    """A ``/_mock/config`` merge patch from a mapping plus keyword conveniences.

    - ``tokens_per_second`` / ``ttft_ms``: a number for every tier, or ``{"ultrafast": 2000}``;
    - ``faults``: a list of faults (``"once status=503"``, ``{"status": 429}``, or whole rules
      ``{"match": {...}, "fault": ..., "count": "once"}``) replacing the rules; or the whole
      ``faults`` section as a mapping;
    - ``scripts``: a list of script rules (``{"match": {...}, "reply": {...}}``), or of bare replies
      (``"pong"`` for a text, ``{"tool_calls": [...]}``) that answer every request; or a mapping of
      regexes over the latest user message to replies (``{"(?i)^ping$": "pong"}``), tried in order;
    - anything else (``time_scale``, ``seed``, ``policies``, ``accounts``, ...) as given.
    """
    result: dict[str, Any] = dict(patch or {})
    for name in changes:
        if name not in KNOWN:
            raise ValueError(suggestions.unknown(name, KNOWN, "setting"))
    for name in ("tokens_per_second", "ttft_ms"):
        value = changes.pop(name, None)
        if value is None:
            continue
        per_tier = value if isinstance(value, Mapping) else dict.fromkeys(TIERS, value)
        profiles = result.setdefault("profiles", {})
        for tier, number in per_tier.items():
            profiles.setdefault(tier, {})[name] = number
    faults = changes.pop("faults", None)
    if faults is not None:
        result["faults"] = dict(faults) if isinstance(faults, Mapping) else {"rules": [_rule(f) for f in faults]}
    scripts = changes.pop("scripts", None)
    if scripts is not None:
        result["scripts"] = _script_rules(scripts)
    result.update(changes)
    return result


def _rule(fault: Any) -> Any:
    if isinstance(fault, Mapping) and "fault" in fault:
        return dict(fault)
    return {"fault": fault}


def _script_rules(scripts: Any) -> list[Any]:
    if isinstance(scripts, Mapping):
        return [{"match": {"message": pattern}, "reply": _script_reply(reply)} for pattern, reply in scripts.items()]
    if isinstance(scripts, str):
        raise TypeError("scripts must be a list of rules or replies, or a mapping of regexes to replies")
    return [dict(s) if isinstance(s, Mapping) and "reply" in s else {"reply": _script_reply(s)} for s in scripts]


def _script_reply(reply: Any) -> Any:
    return {"text": reply} if isinstance(reply, str) else reply
