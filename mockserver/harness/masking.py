"""Never show a full API key: masking for the journal and the control plane.

Keys are masked the way the live API masks them in its 401 message
(``sk-abc***********xyz``). Three nets, so that a key anywhere is caught:
headers and body fields whose *name* says they hold a secret; any string that
*contains* a key the server knows (the caller's, or a fixture account's); and
anything that *looks* like an OpenAI key (``sk-...``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl, urlencode

from mockserver.errors.formats import mask_api_key

SECRET_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "api-key", "x-api-key", "openai-api-key", "cookie", "set-cookie"}
)
SECRET_FIELDS = frozenset(
    {
        "api_key",
        "apikey",
        "api-key",
        "key",
        "authorization",
        "secret",
        "client_secret",
        "password",
        "access_token",
        "token",
    }
)
KEY_LIKE = re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}")


class Masker:
    """Masks the given secrets (longest first) and anything key-shaped."""

    def __init__(self, secrets: Iterable[str | None]) -> None:
        self._secrets = sorted({s for s in secrets if s}, key=len, reverse=True)

    def text(self, value: str) -> str:
        for secret in self._secrets:
            if secret in value:
                value = value.replace(secret, mask_api_key(secret))
        return KEY_LIKE.sub(lambda m: mask_api_key(m.group(0)) if "***" not in m.group(0) else m.group(0), value)

    def secret_value(self, value: str) -> str:
        """A value known to be a secret: ``Bearer sk-...`` keeps its scheme."""
        scheme, sep, rest = value.partition(" ")
        if sep and scheme.lower() in ("bearer", "basic", "token"):
            return f"{scheme} {mask_api_key(rest.strip())}"
        return mask_api_key(value)

    def headers(self, headers: dict[str, str]) -> dict[str, str]:
        return {
            name: self.secret_value(value) if name.lower() in SECRET_HEADERS else self.text(value)
            for name, value in headers.items()
        }

    def body(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: (self.secret_value(v) if isinstance(v, str) and str(k).lower() in SECRET_FIELDS else self.body(v))
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [self.body(v) for v in value]
        if isinstance(value, str):
            return self.text(value)
        return value


class AccessLogMasker(logging.Filter):
    """Masks secrets in the query strings of uvicorn's access log (``GET /_mock/usage?key=sk-...``).

    uvicorn logs each request's path with its query string as the third argument of the record.
    Values of secret-named parameters and anything key-shaped are masked before it is written.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str) and "?" in args[2]:
            record.args = (*args[:2], mask_query(args[2]), *args[3:])
        return True


def mask_query(path: str) -> str:
    """``path?query`` with secret parameters masked (key, api_key, token, ...) and key-shaped values too."""
    base, _, query = path.partition("?")
    masker = Masker(())
    pairs = [
        (name, masker.secret_value(value) if name.lower() in SECRET_FIELDS else masker.text(value))
        for name, value in parse_qsl(query, keep_blank_values=True)
    ]
    return f"{base}?{urlencode(pairs, safe='*')}"


def mask_access_log() -> None:
    """Install :class:`AccessLogMasker` on uvicorn's access logger, once per process."""
    access = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, AccessLogMasker) for f in access.filters):
        access.addFilter(AccessLogMasker())
