"""Misspelled names answered with the closest known one: "unknown field `X`, did you mean `Y`?".

Fixture files, ``PATCH /_mock/config``, the ``@pytest.mark.mockserver`` marker and the
``x-mock-fault`` header all refuse names they do not know. pydantic's own words ("Extra inputs are
not permitted") leave the reader to find the right name; these messages name it, found with
:mod:`difflib` among the fields the schema has at that place.

May import: nothing of the package but :mod:`pydantic` models passed in.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from typing import Any, get_args

from pydantic import BaseModel

CUTOFF = 0.6  # difflib's default: close enough that the guess is worth reading


def closest(name: str, known: Iterable[str]) -> str | None:
    """The known name most like ``name``, or None when none is close."""
    found = difflib.get_close_matches(name, list(known), n=1, cutoff=CUTOFF)
    return found[0] if found else None


def unknown(name: str, known: Iterable[str], what: str = "field") -> str:
    """``unknown field `X`, did you mean `Y`?``, or the known names when none is close."""
    names = sorted(set(known))
    guess = closest(name, names)
    if guess is not None:
        return f"unknown {what} `{name}`, did you mean `{guess}`?"
    return f"unknown {what} `{name}`; known: {', '.join(names)}"


def sentence(text: str) -> str:
    """``text`` ended with a full stop, unless it ends with one already or with a question mark."""
    return text if text.endswith((".", "?", "!")) else f"{text}."


def fields_at(model: type[BaseModel], loc: Sequence[str | int]) -> list[str]:
    """The field names the schema accepts at ``loc`` (the place of an unknown field, without it).

    Follows fields through optional, list, dict and union types; list indexes and dict keys in
    ``loc`` (``profiles.ultrafast``) are stepped over.
    """
    models: list[type[BaseModel]] = [model]
    for part in loc:
        inner = [
            found
            for m in models
            if isinstance(part, str) and part in m.model_fields
            for found in _models_in(m.model_fields[part].annotation)
        ]
        if inner:
            models = inner
    names: list[str] = []
    for m in models:
        names += [info.alias or name for name, info in m.model_fields.items()]
    return names


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The models a field's type holds: itself, or inside ``X | None``, ``list[X]``, ``dict[K, X]``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for arg in get_args(annotation) for model in _models_in(arg)]


def describe_unknown(model: type[BaseModel], loc: Sequence[str | int], extra: Iterable[str] = ()) -> str:
    """The message for an unknown field at ``loc`` (its name last), given the schema's root ``model``;
    ``extra`` adds names accepted there beside the model's fields."""
    *parent, name = loc
    return unknown(str(name), [*fields_at(model, parent), *extra])
