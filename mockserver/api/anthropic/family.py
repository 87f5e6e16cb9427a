"""Which requests speak Anthropic's API: the Messages paths always; ``/v1/models`` when the
request carries an Anthropic header (``anthropic-version``, which the SDKs always send, or
``x-api-key``). Everything else speaks OpenAI's, so OpenAI clients see no change.

The middleware labels every exchange with the dialect :func:`classify` names (which shapes its
errors and headers); :class:`AnthropicRoute` lets the
Anthropic ``/v1/models`` routes match only exchanges labelled ``anthropic``, so they can sit
in front of the OpenAI routes of the same path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi.routing import APIRoute
from starlette.routing import Match
from starlette.types import Scope

from mockserver.engine import dialects
from mockserver.engine.dialects import Dialect

ANTHROPIC = "anthropic"
OPENAI = "openai"
MESSAGES_PATH = "/v1/messages"
MODELS_PATH = "/v1/models"
VERSION_HEADER = "anthropic-version"
API_KEY_HEADER = "x-api-key"


def classify(path: str, headers: Mapping[str, str]) -> Dialect:
    """The dialect of the API family whose shapes (errors, headers) a request gets: Anthropic's, or
    Chat's for OpenAI's (until the route that serves it sets its own)."""
    if path == MESSAGES_PATH or path.startswith(MESSAGES_PATH + "/"):
        return dialects.ANTHROPIC
    if (path == MODELS_PATH or path.startswith(MODELS_PATH + "/")) and (
        VERSION_HEADER in headers or API_KEY_HEADER in headers
    ):
        return dialects.ANTHROPIC
    return dialects.CHAT


def speaks_anthropic(scope: Scope) -> bool:
    exchange: Any = scope.get("state", {}).get("exchange")
    return getattr(exchange, "api", OPENAI) == ANTHROPIC


class AnthropicRoute(APIRoute):
    """A route that matches only requests the middleware labelled as Anthropic."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] == "http" and not speaks_anthropic(scope):
            return Match.NONE, {}
        return super().matches(scope)
