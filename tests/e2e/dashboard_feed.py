"""Reading ``/_mock/events`` as the page does, for the dashboard tests that need no browser."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx
import orjson


def updates_until(
    url: str, done: Callable[[dict[str, Any]], bool], timeout: float = 10.0, **headers: str
) -> list[dict[str, Any]]:
    """The ``update`` events of one connection to ``url``/_mock/events, until ``done(update)`` (the last one)."""
    seen: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    with httpx.stream("GET", f"{url}/_mock/events", headers=headers, timeout=timeout) as reply:
        assert reply.status_code == 200, reply.read()
        assert reply.headers["content-type"].startswith("text/event-stream")
        for line in reply.iter_lines():
            if line.startswith("data: "):
                seen.append(orjson.loads(line[6:]))
                if done(seen[-1]):
                    return seen
            if time.monotonic() > deadline:
                break
    raise AssertionError(f"no update matched within {timeout} s; the last: {seen[-1:]}")
