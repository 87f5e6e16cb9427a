"""Timing presets: the systems the Ultrafast announcement compares, as fixture data.

A preset is a YAML file in ``fixtures/presets/`` (packaged with the wheel) holding the
models one system serves, each with its per-tier timing profile (rate, TTFT, the figure's
``source``) and its prices. ``mockserver serve --preset NAME`` (repeatable), the
``MOCKSERVER_PRESETS`` variable and a fixture's own ``presets: [...]`` merge presets into the
fixture as it is loaded: a preset's model replaces the fixture's model of the same id, other
models are added, and its prices join ``pricing.models``. Keys, limits and policies stay the
fixture's, so every key of the fixture can call every preset's models.

``mockserver presets`` lists them (:func:`rows`). This module reads files only; it sits under
:mod:`mockserver.config.fixture`, which validates the merged result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from mockserver.config.documents import FAST_LOADER

PRESET_SUFFIX = ".yaml"


class PresetError(ValueError):
    """A preset is unknown or malformed. The message names it."""


def presets_dir() -> Path:
    """The built-in presets: packaged with the wheel, or at the repository root in a checkout."""
    packaged = resources.files("mockserver") / "fixtures" / "presets"
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[2] / "fixtures" / "presets"


def names() -> list[str]:
    """Every built-in preset's name, sorted."""
    return sorted(p.name.removesuffix(PRESET_SUFFIX) for p in presets_dir().glob(f"*{PRESET_SUFFIX}"))


def load(name: str) -> dict[str, Any]:
    """One preset's data, checked for the fields a merge needs."""
    path = presets_dir() / f"{name}{PRESET_SUFFIX}"
    if name not in names():
        raise PresetError(f"unknown preset '{name}'; known: {', '.join(names())}")
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=FAST_LOADER)
    if not isinstance(data, dict) or not isinstance(data.get("models"), list):
        raise PresetError(f"preset '{name}': must be a mapping with a list of models")
    pricing = data.get("pricing", {})
    if not isinstance(pricing, dict):
        raise PresetError(f"preset '{name}': pricing must map model ids to prices")
    return data


def merge_presets(fixture: dict[str, Any], presets: Sequence[str]) -> dict[str, Any]:
    """The fixture data with each preset's models and prices merged in, in order (a later one wins)."""
    merged = dict(fixture)
    models = list(merged.get("models") or [])
    pricing = dict(merged.get("pricing") or {})
    prices = dict(pricing.get("models") or {})
    for name in presets:
        preset = load(name)
        for model in preset["models"]:
            model_id = model.get("id") if isinstance(model, dict) else None
            models = [m for m in models if not (isinstance(m, dict) and m.get("id") == model_id)]
            models.append(model)
        prices.update(preset.get("pricing", {}))
    pricing["models"] = prices
    merged.update(models=models, pricing=pricing, presets=list(presets))
    return merged


@dataclass(frozen=True)
class Row:
    """One line of ``mockserver presets``: a model on one tier of one preset."""

    preset: str
    api: str
    model: str
    tier: str
    how: str  # how a client asks for this tier
    rate: str  # e.g. '750 tok/s (Chinese 550 chars/s)'
    ttft_ms: str
    source: str


_HOW = {
    ("openai", "default"): "service_tier default",
    ("openai", "priority"): "service_tier priority",
    ("openai", "flex"): "service_tier flex",
    ("openai", "ultrafast"): "service_tier ultrafast",
    ("anthropic", "default"): "speed standard",
    ("anthropic", "priority"): 'speed "fast"',
}


def rows(name: str) -> list[Row]:
    """The preset's models and tiers with their rates and sources, as listed by ``mockserver presets``."""
    preset = load(name)
    out = []
    for model in preset["models"]:
        api = model.get("api", "openai")
        for tier, profile in (model.get("profiles") or {}).items():
            rate = f"{profile['tokens_per_second']:g} tok/s"
            if profile.get("tokens_per_second_min") is not None:
                low, high = profile["tokens_per_second_min"], profile["tokens_per_second_max"]
                rate = f"{low:g}-{high:g} tok/s (mode {profile['tokens_per_second']:g})"
            if profile.get("chinese_characters_per_second") is not None:
                rate += f" (Chinese {profile['chinese_characters_per_second']:g} chars/s)"
            how = _HOW.get((api, tier), tier)
            if model.get("forced_tier") == tier:
                how = "the model id"
            out.append(
                Row(name, api, model["id"], tier, how, rate, f"{profile['ttft_ms']:g}", profile.get("source", ""))
            )
    return out


def title(name: str) -> str:
    return str(load(name).get("title", name))
