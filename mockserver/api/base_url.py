"""A request that left out ``/v1`` gets the live API's 404, and one warning in the server's log.

``OPENAI_BASE_URL=http://127.0.0.1:8000`` (without ``/v1``) makes the SDKs ask for ``/models`` or
``/chat/completions``; the live API answers ``404 Invalid URL``, and so does this server, so the
client sees what it would see live. The log says once, per path, what the base URL should be.
"""

from __future__ import annotations

import logging
import threading

logger = logging.getLogger("mockserver")

# The API paths an SDK asks for under its base URL (a response or model id after them too).
API_PATHS = ("/models", "/chat/completions", "/responses", "/messages")


def missing_v1(path: str) -> str | None:
    """The API path ``path`` names without its ``/v1`` prefix, or None when it is not one."""
    for api_path in API_PATHS:
        if path == api_path or path.startswith(api_path + "/"):
            return api_path
    return None


class MissingV1:
    """One server's warnings: one per API path, so a client retrying does not flood the log
    (at most ``len(API_PATHS)`` lines per server)."""

    def __init__(self) -> None:
        self._warned: set[str] = set()
        self._lock = threading.Lock()

    def warn(self, method: str, path: str, root: str) -> bool:
        """Log that ``path`` lacks ``/v1`` the first time this server sees its kind; True if logged."""
        api_path = missing_v1(path)
        if api_path is None:
            return False
        with self._lock:
            if api_path in self._warned:
                return False
            self._warned.add(api_path)
        root = root.rstrip("/")
        logger.warning(
            "%s %s has no /v1 and gets the live API's 404: a base URL must end in /v1, "
            "e.g. OPENAI_BASE_URL=%s/v1 (the anthropic SDKs add /v1 themselves: ANTHROPIC_BASE_URL=%s)",
            method,
            path,
            root,
            root,
        )
        return True
