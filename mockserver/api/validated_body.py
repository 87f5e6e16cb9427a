"""A request body checked against its schema, with the event loop's turns through a long list.

Every inference body is validated by its pydantic model in strict mode (the live API refuses
``"yes"`` for a boolean or ``"3"`` for an integer). pydantic validates a body in one call: a Chat
body of 150,000 messages takes about half a second, and the event loop, every paced stream and
every other request wait for it. So a body whose list (``messages``, ``tools``) is longer
than :data:`~mockserver.engine.in_turns.ITEMS_PER_TURN` items is validated in pieces:

1. the body with only the first piece of each long list, by the model itself (so every other
   field, and the list's own constraints such as ``min_length``, are checked as usual);
2. the rest of each long list, a piece at a time, by the list's own validator, with a turn of the
   loop between pieces;
3. the model then holds the whole lists.

The problems found are put in the order one call would have reported them (fields in the model's
order, a list's items by index, unknown fields last), so the first, which the error names, is the
same. A list whose field has a ``max_length`` is validated whole, as that bound keeps it short.
"""

from __future__ import annotations

import asyncio
import types
from functools import cache
from typing import Any, TypeVar, Union, get_args, get_origin

from annotated_types import MaxLen
from pydantic import BaseModel, TypeAdapter, ValidationError

from mockserver.engine.in_turns import ITEMS_PER_TURN

Body = TypeVar("Body", bound=BaseModel)
PIECE = ITEMS_PER_TURN
# The longest JSON text that cannot hold a list of more than PIECE items: such a list takes its two
# brackets, an item of at least one byte each and a comma between every two.
SHORT_BYTES = 2 * PIECE + 2


class BodyInvalid(Exception):
    """The body does not match its schema: ``problems`` as pydantic reports them, in its order."""

    def __init__(self, problems: list[dict[str, Any]]) -> None:
        super().__init__(problems[0]["msg"] if problems else "invalid body")
        self.problems = problems


def validated_at_once(model: type[Body], data: dict[str, Any], size: int | None = None) -> Body | None:
    """``data`` validated (strict) by ``model`` in one call, when none of its lists is long (nearly every
    body), without a coroutine; :class:`BodyInvalid` when it does not match; None when a list is long
    (:func:`validated` takes it a piece at a time). ``size``: the body's length in bytes, when known:
    a body of at most :data:`SHORT_BYTES` holds no long list, and its lists are not looked at."""
    if size is None or size > SHORT_BYTES:
        for key in _item_validators(model):
            items = data.get(key)
            if type(items) is list and len(items) > PIECE:
                return None
    try:
        body: Body = model.__pydantic_validator__.validate_python(data, strict=True)
    except ValidationError as exc:
        raise BodyInvalid([dict(e) for e in exc.errors()]) from None
    return body


async def validated(model: type[Body], data: dict[str, Any]) -> Body:
    """``data`` validated (strict) by ``model``; :class:`BodyInvalid` when it does not match. A long list
    is validated a piece at a time, with the event loop's turns between the pieces."""
    at_once = validated_at_once(model, data)
    if at_once is not None:
        return at_once
    lists = _item_validators(model)
    long = {key: data[key] for key in lists if type(data.get(key)) is list and len(data[key]) > PIECE}
    body: Body | None
    try:
        body = model.__pydantic_validator__.validate_python(
            {**data, **{key: items[:PIECE] for key, items in long.items()}}, strict=True
        )
    except ValidationError as exc:
        problems: list[dict[str, Any]] = [dict(e) for e in exc.errors()]
        body = None
    else:
        problems = []
    rests: dict[str, list[Any]] = {}
    for key, items in long.items():
        name, adapter = lists[key]
        rests[key] = []
        for start in range(PIECE, len(items), PIECE):
            await asyncio.sleep(0)
            try:
                rests[key] += adapter.validate_python(items[start : start + PIECE], strict=True)
            except ValidationError as exc:
                problems += [{**e, "loc": (key, start + int(e["loc"][0]), *e["loc"][1:])} for e in exc.errors()]
    if problems or body is None:
        raise BodyInvalid(_in_field_order(model, problems))
    for key, rest in rests.items():
        name, _ = lists[key]
        setattr(body, name, [*getattr(body, name), *rest])
    return body


def _in_field_order(model: type[BaseModel], problems: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``problems`` in the order one validation reports them: by field, in the model's order, unknown
    fields last; within a field as found (a list's first piece, then the others by index)."""
    order = {field.alias or name: rank for rank, (name, field) in enumerate(model.model_fields.items())}
    last = len(order)
    return sorted(problems, key=lambda problem: order.get(problem["loc"][0], last) if problem["loc"] else -1)


@cache
def _item_validators(model: type[BaseModel]) -> dict[str, tuple[str, TypeAdapter[Any]]]:
    """The model's fields that hold a list (alone or with None), by their key in the body: the field's
    name and a validator of the list alone. Fields bounded by a ``max_length`` are left out."""
    found: dict[str, tuple[str, TypeAdapter[Any]]] = {}
    for name, field in model.model_fields.items():
        if any(isinstance(bound, MaxLen) for bound in field.metadata):
            continue
        annotation = field.annotation
        if get_origin(annotation) in (Union, types.UnionType):
            others = [arg for arg in get_args(annotation) if arg is not type(None)]
            annotation = others[0] if len(others) == 1 else None
        if annotation is not None and get_origin(annotation) is list:
            found[field.alias or name] = (name, TypeAdapter(annotation))
    return found
