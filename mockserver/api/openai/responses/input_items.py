"""The input items of a stored response, for ``GET /v1/responses/{id}/input_items``.

A request's ``input`` (already checked by :func:`mockserver.engine.conversation.read_input`)
becomes the item objects the SDKs' ``ResponseItem`` union knows, each with an id: the
client's own when it sent one, else a new ``msg_`` / ``fc_`` / ``fco_`` / ``rs_`` id.
A string input is one user message. The list is a cursor page, newest first by default,
as the live API pages it (``after``, ``limit`` 1 to 100, default 20, ``order``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from mockserver import errors
from mockserver.engine import in_turns

DEFAULT_PAGE_LIMIT = 20
MAX_PAGE_LIMIT = 100
PAGE_ORDERS = ["asc", "desc"]
_ID_PREFIXES = {"message": "msg", "function_call": "fc", "function_call_output": "fco", "reasoning": "rs"}


def input_items(raw: str | list[Any] | None, new_id: Callable[[str], str]) -> list[dict[str, Any]]:
    """The item objects of ``input``; ``new_id(prefix)`` makes the ids the client didn't send."""
    if raw is None:
        return []
    if isinstance(raw, str):
        return [_message({"role": "user", "content": raw}, new_id("msg"))]
    return _listed(raw, new_id)


async def input_items_in_turns(raw: str | list[Any] | None, new_id: Callable[[str], str]) -> list[dict[str, Any]]:
    """:func:`input_items`, with the event loop's turn after every
    :data:`~mockserver.engine.in_turns.ITEMS_PER_TURN` items of a long ``input``
    (:func:`mockserver.engine.in_turns.joined`)."""
    if not isinstance(raw, list):
        return input_items(raw, new_id)
    return await in_turns.joined(partial(_listed, new_id=new_id), raw)


def _listed(raw: Sequence[Any], new_id: Callable[[str], str]) -> list[dict[str, Any]]:
    items = []
    for item in raw:
        kind = item.get("type", "message")
        given = item.get("id")
        item_id = given if isinstance(given, str) else new_id(_ID_PREFIXES.get(kind, "item"))
        listed = _item(item, kind, item_id)
        if listed is not None:
            items.append(listed)
    return items


def _item(item: Mapping[str, Any], kind: str, item_id: str) -> dict[str, Any] | None:
    if kind == "message":
        return _message(item, item_id)
    if kind == "function_call":
        fields = {k: item[k] for k in ("call_id", "name", "arguments")}
        return {"id": item_id, "type": kind, **fields, "status": "completed"}
    if kind == "function_call_output":
        return {
            "id": item_id,
            "type": kind,
            "call_id": item.get("call_id"),
            "output": item["output"],
            "status": "completed",
        }
    if kind == "reasoning":
        summary = [{"type": "summary_text", "text": str(p.get("text", ""))} for p in item.get("summary", [])]
        return {"id": item_id, "type": kind, "summary": summary}
    # Other item types (references, hosted-tool calls) are accepted but not simulated. Sent back as
    # they came, most would lack fields the SDKs' item types require, so they are not listed.
    return None


def _message(item: Mapping[str, Any], item_id: str) -> dict[str, Any]:
    role = item["role"]
    content = item.get("content")
    parts = content if isinstance(content, list) else [{"type": "input_text", "text": content or ""}]
    if role == "assistant":
        return {
            "id": item_id,
            "type": "message",
            "role": role,
            "status": "completed",
            "content": [_output_part(p) for p in parts],
        }
    return {
        "id": item_id,
        "type": "message",
        "role": role,
        "status": "completed",
        "content": [_input_part(p) for p in parts],
    }


def _input_part(part: Mapping[str, Any]) -> dict[str, Any]:
    if part.get("type") in ("input_text", "output_text", "text"):
        return {"type": "input_text", "text": str(part.get("text", ""))}
    if part.get("type") == "input_image":
        return {"detail": "auto", **part}
    return dict(part)


def _output_part(part: Mapping[str, Any]) -> dict[str, Any]:
    if part.get("type") == "refusal":
        return {"type": "refusal", "refusal": str(part.get("refusal", ""))}
    return {"type": "output_text", "text": str(part.get("text", "")), "annotations": [], "logprobs": []}


# -- Paging -------------------------------------------------------------------------------------


def page(items: Sequence[dict[str, Any]], query: Mapping[str, str]) -> dict[str, Any]:
    """One cursor page of ``items`` (kept in input order) for the ``after``/``limit``/``order`` query."""
    limit = _limit(query.get("limit"))
    order = query.get("order", "desc")
    if order not in PAGE_ORDERS:
        raise errors.invalid_value("order", order, PAGE_ORDERS)
    ordered = list(items) if order == "asc" else list(reversed(items))
    after = query.get("after")
    if after is not None:
        position = next((i for i, item in enumerate(ordered) if item["id"] == after), None)
        if position is None:
            raise errors.InvalidRequestError(
                f"Invalid 'after': no input item with id '{after}' in this response.",
                param="after",
                code="invalid_value",
            )
        ordered = ordered[position + 1 :]
    data = ordered[:limit]
    return {
        "object": "list",
        "data": data,
        "first_id": data[0]["id"] if data else None,
        "last_id": data[-1]["id"] if data else None,
        "has_more": len(ordered) > limit,
    }


def _limit(raw: str | None) -> int:
    if raw is None:
        return DEFAULT_PAGE_LIMIT
    try:
        value = int(raw)
    except ValueError:
        raise errors.invalid_type("limit", "an integer", "a string") from None
    if value < 1:
        raise errors.InvalidRequestError(
            f"Invalid 'limit': integer below minimum value. Expected a value >= 1, but got {value} instead.",
            param="limit",
            code="integer_below_min_value",
        )
    if value > MAX_PAGE_LIMIT:
        raise errors.InvalidRequestError(
            f"Invalid 'limit': integer above maximum value. Expected a value <= {MAX_PAGE_LIMIT}, but got {value} "
            "instead.",
            param="limit",
            code="integer_above_max_value",
        )
    return value
