"""Turn request-validation failures into the live API's 400 errors.

FastAPI reports a bad body as a list of pydantic errors and would answer 422 in
its own shape. :func:`to_api_error` maps the first problem to the message, param
and code the live API uses, so clients see one error shape everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mockserver import errors

_EXPECTED = {
    "int": "an integer",
    "float": "a number",
    "string": "a string",
    "bool": "a boolean",
    "list": "an array",
    "dict": "an object",
    "model": "an object",
    "model_attributes": "an object",
}
_BOUNDS = {
    "greater_than_equal": ("below_min_value", "below minimum value", ">=", "ge"),
    "greater_than": ("below_min_value", "below minimum value", ">", "gt"),
    "less_than_equal": ("above_max_value", "above maximum value", "<=", "le"),
    "less_than": ("above_max_value", "above maximum value", "<", "lt"),
}


def param_path(loc: Sequence[Any]) -> str:
    """``("body", "messages", 0, "role")`` -> ``messages[0].role``, without pydantic's union tags."""
    path = ""
    for part in loc[1:] if loc and loc[0] == "body" else loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif _is_union_tag(part):
            continue
        else:
            path += f".{part}" if path else str(part)
    return path


def _is_union_tag(part: str) -> bool:
    return (
        "[" in part or part in {"str", "int", "float", "bool", "none", "list", "dict"} or part.startswith("function-")
    )


def _plain(bound: Any) -> Any:
    """A bound as the live API writes it: ``0`` for a decimal field's ``0.0`` (``>= 0, but got -1``)."""
    return int(bound) if isinstance(bound, float) and bound.is_integer() else bound


def to_api_error(problems: Sequence[dict[str, Any]]) -> errors.MockAPIError:
    if not problems:
        return errors.InvalidRequestError()
    first = problems[0]
    kind: str = first.get("type", "")
    loc = tuple(first.get("loc", ()))
    param = param_path(loc)
    value = first.get("input")

    if kind == "json_invalid":
        return errors.invalid_json()
    if kind == "missing" and not param:
        return errors.InvalidRequestError("You must provide a model parameter.", code=None)
    if kind == "missing":
        if param == "model":
            return errors.InvalidRequestError("you must provide a model parameter", param="model")
        return errors.missing_parameter(param)
    if kind == "extra_forbidden":
        return errors.InvalidRequestError(f"Unrecognized request argument supplied: {param}")
    if not param and kind in {"model_attributes_type", "dict_type", "model_type"}:
        return errors.InvalidRequestError("The request body must be a JSON object.", code="invalid_type")
    if kind in {"literal_error", "enum"}:
        expected = str((first.get("ctx") or {}).get("expected", ""))
        return errors.InvalidRequestError(
            f"Invalid value: '{value}'. Supported values are: {expected}.", param=param, code="invalid_value"
        )
    if kind in _BOUNDS:
        code_suffix, words, op, key = _BOUNDS[kind]
        bound = (first.get("ctx") or {}).get(key)
        number = "decimal" if isinstance(bound, float) or isinstance(value, float) else "integer"
        return errors.InvalidRequestError(
            f"Invalid '{param}': {number} {words}. Expected a value {op} {_plain(bound)}, but got {value} instead.",
            param=param,
            code=f"{number}_{code_suffix}",
        )
    if kind == "too_short" and isinstance(value, list) and not value:
        return errors.InvalidRequestError(
            f"Invalid '{param}': empty array. Expected an array with minimum length 1, but got an empty array instead.",
            param=param,
            code="empty_array",
        )
    if kind.endswith("_type") or kind.endswith("_parsing"):
        expected = _expected_types(problems, loc)
        return errors.invalid_type(param, expected, errors.describe(value))
    message = str(first.get("msg", "Invalid value")).removeprefix("Value error, ")
    return errors.InvalidRequestError(f"Invalid value for '{param}': {message}.", param=param, code="invalid_value")


def _expected_types(problems: Sequence[dict[str, Any]], loc: tuple[Any, ...]) -> str:
    """Every type a union would have accepted at this place, in words."""
    target = param_path(loc)
    names: list[str] = []
    for problem in problems:
        if param_path(tuple(problem.get("loc", ()))) != target:
            continue
        kind = str(problem.get("type", ""))
        stem = kind.removesuffix("_type").removesuffix("_parsing")
        phrase = _EXPECTED.get(stem)
        if phrase and phrase not in names:
            names.append(phrase)
    if not names:
        return "a valid value"
    return names[0] if len(names) == 1 else "one of " + ", ".join(names[:-1]) + " or " + names[-1]
