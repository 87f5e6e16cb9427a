"""What a cassette may hold: the headers that matter, and never a credential.

Credentials (``Authorization``, ``api-key``, ``x-api-key``, ``openai-organization``,
``openai-project``, cookies) are never written: headers are kept by an allow-list that names none of
them, and their values, and the masked forms an API quotes back (``sk-pro****wxyz`` in a 401),
are replaced in every body and event by ``[redacted]``. A fixture's ``redact:`` regexes replace what
they match in every string of the request and the reply the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from mockserver.config.patterns import compile_pattern

REDACTED = "[redacted]"

CREDENTIAL_HEADERS = frozenset(
    {"authorization", "api-key", "x-api-key", "openai-organization", "openai-project", "cookie", "set-cookie"}
)
MOCK_ADMIN_HEADER = "x-mock-admin-token"
_REQUEST_HEADERS = frozenset({"openai-beta", "anthropic-version", "anthropic-beta"})
_RESPONSE_HEADERS = frozenset(
    {"retry-after", "retry-after-ms", "openai-processing-ms", "request-id", "x-request-id", "content-type",
     "x-should-retry"}
)  # fmt: skip
_RESPONSE_PREFIXES = ("x-ratelimit-", "anthropic-ratelimit-")
MASK_SUFFIX = 4  # the API quotes back a masked key ending in the key's last four characters
SHORTEST_SECRET = 8  # shorter values would match ordinary text
# API keys in the shapes OpenAI and Anthropic issue them (sk-..., sk-proj-..., sk-ant-...), whole or
# masked as a 401 quotes them back: scrubbed from cassettes whose recorder kept them (VCR imports).
KEY_PATTERNS = (r"\bsk-[A-Za-z0-9_\-*]{8,}",)


def request_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The request headers that change the reply, and nothing else."""
    kept = {}
    for name, value in headers:
        low = name.lower()
        if low in _REQUEST_HEADERS or (low.startswith("x-mock-") and low != MOCK_ADMIN_HEADER):
            kept[low] = value
    return kept


def response_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The reply headers a client reads: rate limits, retry advice, request ids, content type. A header
    sent more than once keeps every value, joined by ``", "`` as HTTP allows (RFC 9110 §5.3)."""
    kept: dict[str, str] = {}
    for name, value in headers:
        low = name.lower()
        if low in _RESPONSE_HEADERS or low.startswith(_RESPONSE_PREFIXES):
            kept[low] = f"{kept[low]}, {value}" if low in kept else value
    return kept


def secrets_in(headers: Iterable[tuple[str, str]]) -> list[str]:
    """The credential values a request carried (the token of ``Bearer TOKEN``, keys, org and project ids)."""
    found = []
    for name, value in headers:
        low = name.lower()
        if low not in CREDENTIAL_HEADERS and low != MOCK_ADMIN_HEADER:
            continue
        for part in re.split(r"[\s;,=]+", value):
            if len(part) >= SHORTEST_SECRET:
                found.append(part)
    return found


class Redactor:
    """Replaces credentials and the fixture's patterns in every string of a record."""

    def __init__(self, patterns: Iterable[str] = ()) -> None:
        self._patterns = [compile_pattern(p) for p in patterns]

    def for_request(self, secrets: Iterable[str]) -> Callable[[Any], Any]:
        """A function that redacts one exchange's values: its own credentials, then the patterns."""
        masks = []
        for secret in secrets:
            masks.append(re.compile(re.escape(secret)))
            # The masked forms quoted back: a few leading characters, stars, the last four.
            masks.append(
                re.compile(
                    re.escape(secret[:3]) + r"[^\s\"']{0,12}\*{2,}[^\s\"']{0,12}" + re.escape(secret[-MASK_SUFFIX:])
                )
            )
        patterns = self._patterns

        def text(value: str) -> str:
            for mask in masks:
                value = mask.sub(REDACTED, value)
            for pattern in patterns:
                value = pattern.sub(REDACTED, value)
            return value

        def walk(value: Any) -> Any:
            if isinstance(value, str):
                return text(value)
            if isinstance(value, list):
                return [walk(v) for v in value]
            if isinstance(value, Mapping):
                return {k: walk(v) for k, v in value.items()}
            return value

        return walk
