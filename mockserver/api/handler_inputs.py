"""What a route handler reads: the running server's state and the request's body, parsed and validated
(with the body's schema for the OpenAPI document, built when the document is). The reply planner's view
of the server is :mod:`mockserver.api.reply_sources`, which the inference families load."""

from __future__ import annotations

import asyncio
from typing import Any, Protocol, TypeVar

from fastapi import Request
from pydantic import BaseModel

from mockserver import errors
from mockserver.api import validated_body
from mockserver.api.asgi.direct_routes import App
from mockserver.api.asgi.large_bodies import LARGE_BODY_BYTES, hold_collector, keep_lists
from mockserver.api.asgi.request_body import body_of
from mockserver.api.middleware import exchange_of
from mockserver.engine import jsonbody
from mockserver.errors import validation
from mockserver.server_state import ServerState

Body = TypeVar("Body", bound=BaseModel)

# A turn that reaches the loop's timers and sockets too (uvloop can run a task that yields with
# sleep(0) again before it polls them).
YIELD_S = 0.001

# A body up to this size is parsed and its depth checked in one go: it holds too few values for its walk to
# take more than about one of the loop's turns (jsonbody.VALUES_PER_TURN), and nearly every body is this small.
AT_ONCE_BYTES = 16 * 1024


async def large_body_read(request: Request) -> None:
    """What a large body (past :data:`~mockserver.api.asgi.large_bodies.LARGE_BODY_BYTES`) gets once read: the
    collector's passes held off until the request is planned or refused (:mod:`mockserver.api.asgi.large_bodies`),
    and a turn of the event loop of its own, apart from reading the body, before it is parsed."""
    hold_collector(exchange_of(request.scope))
    await asyncio.sleep(YIELD_S)


def server_state(request: Request) -> ServerState:
    """The running server's state: the app's :attr:`~mockserver.api.asgi.direct_routes.App.mock_state`
    (also at ``app.state.mock``, which Starlette's ``State.__getattr__`` reaches only after the
    ordinary lookup has failed, about 1 µs, and a request's path asks for it several times)."""
    app: App = request.scope["app"]
    return app.mock_state


class BodyWording(Protocol):
    """How an API family words the refusal of a body it cannot read (:func:`parse_body`)."""

    def not_json(self, error: errors.MockAPIError) -> errors.MockAPIError:
        """The refusal of a body that is not JSON (``error``, as the JSON reader words it)."""
        ...

    def empty(self) -> errors.MockAPIError:
        """The refusal of an empty body."""
        ...

    def not_an_object(self) -> errors.MockAPIError:
        """The refusal of JSON that is not an object."""
        ...

    def invalid(self, problems: list[dict[str, Any]]) -> errors.MockAPIError:
        """The refusal of an object that fails the request model (pydantic's errors, first first)."""
        ...


class OpenAIWording:
    """OpenAI's wording: its ``invalid_request_error``, with a validation error's parameter."""

    def not_json(self, error: errors.MockAPIError) -> errors.MockAPIError:
        return error

    def empty(self) -> errors.MockAPIError:
        return errors.InvalidRequestError("You must provide a model parameter.")

    def not_an_object(self) -> errors.MockAPIError:
        return errors.InvalidRequestError("The request body must be a JSON object.", code="invalid_type")

    def invalid(self, problems: list[dict[str, Any]]) -> errors.MockAPIError:
        return validation.to_api_error([{**e, "loc": ("body", *e["loc"])} for e in problems])


OPENAI_WORDING = OpenAIWording()


async def parse_body(
    request: Request, model: type[Body], wording: BodyWording = OPENAI_WORDING
) -> tuple[Body, dict[str, Any]]:
    """Parse a JSON body whatever its Content-Type (as the live API does) and validate it, or refuse
    it as ``wording`` words it.

    Returns the validated model and the raw mapping, which seeds generated content.
    """
    raw = await body_of(request)
    if len(raw) > LARGE_BODY_BYTES:
        await large_body_read(request)
    max_depth = server_state(request).settings.max_json_depth
    try:
        if len(raw) <= AT_ONCE_BYTES:  # nearly every body: parsed and checked at once
            data = jsonbody.loads(raw, max_depth) if raw else None
        else:
            data = await jsonbody.loads_in_turns(raw, max_depth)
    except errors.MockAPIError as exc:
        raise wording.not_json(exc) from None
    if data is None:
        raise wording.empty()
    if not isinstance(data, dict):
        raise wording.not_an_object()
    try:
        # Strict: the live API refuses "yes" for a boolean or "3" for an integer; a long list of
        # messages is validated a piece at a time (:mod:`mockserver.api.validated_body`).
        validated = validated_body.validated_at_once(model, data, len(raw))  # nearly every body: at once
        if validated is None:  # a long list: a piece at a time
            validated = await validated_body.validated(model, data)
        if len(raw) > LARGE_BODY_BYTES:
            keep_lists(exchange_of(request.scope), data, validated)
        return validated, data
    except validated_body.BodyInvalid as exc:
        raise wording.invalid(exc.problems) from None


# The request models whose bodies parse_body documents, in the order the routes were declared.
_DOCUMENTED_BODIES: list[type[BaseModel]] = []
# What body_schemas built last, and from how many of them.
_body_schemas: tuple[int, dict[str, Any]] | None = None


def body_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``openapi_extra`` that documents a body parsed by :func:`parse_body`: a reference to the
    model's schema, which :func:`body_schemas` builds when the OpenAPI document is first asked for
    (building every request model's JSON schema at import cost start-up about 45 ms)."""
    _DOCUMENTED_BODIES.append(model)
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{model.__name__}"}}},
        }
    }


def body_schemas() -> dict[str, Any]:
    """The schemas the bodies :func:`body_schema` documented refer to, by name, for the OpenAPI
    document's components: each model's and those it refers to. Built once (every app built in a
    process documents the same bodies); the caller copies what it changes."""
    global _body_schemas
    if _body_schemas is None or _body_schemas[0] != len(_DOCUMENTED_BODIES):
        schemas: dict[str, Any] = {}
        for model in _DOCUMENTED_BODIES:
            schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
            schemas.update(schema.pop("$defs", {}))
            schemas[model.__name__] = schema
        _body_schemas = (len(_DOCUMENTED_BODIES), schemas)
    return _body_schemas[1]
