"""An inference route's way into the request pipeline (:func:`mockserver.api.pipeline.serve`).

The pipeline and a route's API family (planning, replies, streams) load with the route's first request,
not at start-up, and are kept from then on: an ``import`` statement run on every request costs about a
microsecond.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from fastapi import Request
from starlette.responses import Response

if TYPE_CHECKING:
    from mockserver.api.family import Family

Serve = Callable[[Request, "Family[Any]"], Awaitable[Response]]


class PipelineEntry:
    """The pipeline's entry and one API family, loaded once: ``load_family`` imports the family and
    returns it (it runs with the route's first request). A route calls :meth:`loaded` and awaits
    ``serve(request, family)`` itself, so that no coroutine of this class stays alive with a stream."""

    __slots__ = ("_load_family", "_loaded")

    def __init__(self, load_family: Callable[[], Family[Any]]) -> None:
        self._load_family = load_family
        self._loaded: tuple[Serve, Family[Any]] | None = None

    def loaded(self) -> tuple[Serve, Family[Any]]:
        """The pipeline's entry and the family, imported with the first call."""
        loaded = self._loaded
        if loaded is None:
            from mockserver.api.pipeline import serve

            loaded = self._loaded = (serve, self._load_family())
        return loaded
