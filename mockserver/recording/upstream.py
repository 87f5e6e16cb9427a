"""The httpx client that forwards to the real API: pooled connections, streamed replies, timeouts.

The client's own credentials go upstream unchanged; the hop-by-hop headers do not (RFC 9110 §7.6.1),
nor ``host`` (httpx sets the upstream's). The reply comes back decoded, so its
``content-encoding`` and ``content-length`` are dropped on the way to the client; every other reply
header goes back as the upstream sent it: byte for byte, in order, a repeated one (the two
``set-cookie`` of the live APIs) as as many header lines.
"""

from __future__ import annotations

from collections.abc import Iterable

import httpx

from mockserver import errors

CONNECT_TIMEOUT_S = 10.0
READ_TIMEOUT_S = 600.0  # the SDKs' own default: a long reasoning TTFT is not a dead upstream
MAX_CONNECTIONS = 100

_HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
     "transfer-encoding", "upgrade", "host", "content-length"}
)  # fmt: skip
_NOT_PASSED_BACK = _HOP_BY_HOP | {"content-encoding"}


class UpstreamUnavailable(errors.MockAPIError):
    """The upstream could not be reached or did not answer: a 502, as a gateway sends."""

    status_code = 502
    type = "server_error"
    default_message = "The upstream API could not be reached."


class Upstream:
    def __init__(self, url: str, *, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.url = url.rstrip("/")
        self._client = httpx.AsyncClient(
            timeout=httpx.Timeout(READ_TIMEOUT_S, connect=CONNECT_TIMEOUT_S),
            limits=httpx.Limits(max_connections=MAX_CONNECTIONS),
            follow_redirects=False,
            transport=transport,
        )

    def target(self, path: str, query: str) -> str:
        base = self.url
        if base.endswith("/v1") and path.startswith("/v1/"):
            base = base.removesuffix("/v1")  # --upstream https://api.openai.com/v1 means the same origin
        return f"{base}{path}" + (f"?{query}" if query else "")

    async def send(
        self, method: str, path: str, query: str, headers: Iterable[tuple[str, str]], body: bytes
    ) -> httpx.Response:
        """Open the upstream reply (its body not yet read), or raise :class:`UpstreamUnavailable`."""
        forwarded = [(k, v) for k, v in headers if k.lower() not in _HOP_BY_HOP]
        request = self._client.build_request(method, self.target(path, query), headers=forwarded, content=body)
        try:
            return await self._client.send(request, stream=True)
        except httpx.TransportError as exc:
            raise UpstreamUnavailable(
                f"The upstream API at {self.url} could not be reached ({type(exc).__name__}: {exc or 'no answer'})."
            ) from None

    @property
    def closed(self) -> bool:
        return self._client.is_closed

    async def aclose(self) -> None:
        await self._client.aclose()


def headers_back(response: httpx.Response) -> list[tuple[bytes, bytes]]:
    """The upstream reply's headers as the client gets them: the raw bytes of each header line, in order
    (names lower-cased, as ASGI wants them), so a repeated header stays repeated and a value outside
    Latin-1 (UTF-8 bytes) is relayed unchanged."""
    kept = []
    for name, value in response.headers.raw:
        low = name.lower()
        if low.decode("latin-1") not in _NOT_PASSED_BACK:
            kept.append((low, value))
    return kept
