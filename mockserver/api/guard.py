"""Who may use the control plane (``/_mock/``): a check made before any control route runs.

The control plane can reset the server, rewrite its accounts and entitlements, and read the
journal, so two rules hold (the threat model is in SECURITY.md):

- A browser page on another origin is refused, always: a request with an ``Origin`` that is not
  this server's own, or with ``Sec-Fetch-Site: cross-site`` / ``same-site``, gets a 403. Without
  this, any web page a developer opens could ``POST /_mock/reset`` on their local server (a
  "simple" cross-origin request runs even though the page cannot read the reply). Clients that
  are not browsers (SDKs, curl, the test helpers) send no ``Origin`` and are unaffected.
- With an admin token configured (``--admin-token``, required when listening beyond loopback),
  every control request must carry it: ``Authorization: Bearer TOKEN`` or ``x-mock-admin-token``,
  or, from the dashboard (``/_mock/ui``), the cookie its sign-in form sets (:data:`ADMIN_COOKIE`:
  a digest of the token, ``HttpOnly``, ``SameSite=Strict``). The dashboard's page and its sign-in
  form (:data:`SELF_CHECKED`) check the token themselves, so that without it they answer with the
  form rather than JSON.
"""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import urlsplit

from mockserver import errors

CONTROL_PREFIX = "/_mock/"
ADMIN_TOKEN_HEADER = "x-mock-admin-token"
SAFE_FETCH_SITES = frozenset({"same-origin", "none"})  # "none": typed in the address bar, a bookmark
ADMIN_COOKIE = "mockserver_admin"
SIGN_IN_PATH = "/_mock/ui/sign-in"
SELF_CHECKED = frozenset({"/_mock/ui", SIGN_IN_PATH})  # these check the admin token themselves (signed_in)


def refusal(path: str, headers: dict[str, str], admin_token: str | None) -> errors.MockAPIError | None:
    """The error a control-plane request gets, or None when it may go on. Other paths always go on."""
    if not path.startswith(CONTROL_PREFIX) and path != CONTROL_PREFIX.rstrip("/"):
        return None
    if _cross_origin(headers):
        return errors.PermissionDeniedError(
            "The control plane (/_mock/) does not accept requests from web pages on other origins.",
            code="cross_origin_control_plane",
        )
    if path not in SELF_CHECKED and not signed_in(headers, admin_token):
        return errors.AuthenticationError(
            "The control plane (/_mock/) requires the server's admin token: send 'Authorization: Bearer "
            f"<token>' or '{ADMIN_TOKEN_HEADER}: <token>'.",
            code="admin_token_required",
        )
    return None


def _cross_origin(headers: dict[str, str]) -> bool:
    site = headers.get("sec-fetch-site")
    if site is not None and site.lower() not in SAFE_FETCH_SITES:
        return True
    origin = headers.get("origin")
    if origin is None:
        return False
    parts = urlsplit(origin)
    return parts.scheme not in ("http", "https") or parts.netloc.lower() != headers.get("host", "").lower()


def signed_in(headers: dict[str, str], admin_token: str | None) -> bool:
    """The request may use the control plane: no admin token is configured, or it carries it."""
    return admin_token is None or _has_token(headers, admin_token)


def _has_token(headers: dict[str, str], token: str) -> bool:
    scheme, _, given = headers.get("authorization", "").partition(" ")
    candidates = [headers.get(ADMIN_TOKEN_HEADER, "")]
    if scheme.lower() == "bearer":
        candidates.append(given.strip())
    if any(hmac.compare_digest(c.encode(), token.encode()) for c in candidates if c):
        return True
    cookie = _cookie(headers.get("cookie", ""), ADMIN_COOKIE)
    return cookie is not None and hmac.compare_digest(cookie.encode(), cookie_value(token).encode())


def cookie_value(token: str) -> str:
    """What the dashboard's cookie holds: a digest of the admin token, never the token itself."""
    return hashlib.sha256(b"mockserver-dashboard:" + token.encode()).hexdigest()


def token_matches(given: str, token: str) -> bool:
    return hmac.compare_digest(given.encode(), token.encode())


def _cookie(header: str, name: str) -> str | None:
    for part in header.split(";"):
        key, sep, value = part.strip().partition("=")
        if sep and key == name:
            return value
    return None
