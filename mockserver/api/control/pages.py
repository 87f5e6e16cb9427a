"""The dashboard's files and the headers they are served with.

Every file is in :data:`STATIC` (shipped in the wheel with the package); nothing is built and
nothing is fetched from another host. The page runs only its own script: the
``Content-Security-Policy`` allows scripts, styles and connections from the server's own origin
and nothing else (no inline script, no ``eval``, no frames).
"""

from __future__ import annotations

import html
from functools import cache
from pathlib import Path

STATIC = Path(__file__).parent / "static"
ASSETS = {  # what /_mock/ui/<name> serves, and as what
    "app.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
    "chart.js": "text/javascript; charset=utf-8",
}
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",  # no-referrer would make a form post's Origin "null", refused as cross-origin
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}

_SIGN_IN = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>mockserver: sign in</title>
<link rel="icon" href="data:,"></head>
<body><main><h1>mockserver</h1>
<p>This server's control plane needs its admin token (<code>--admin-token</code>). It is asked once:
the browser keeps a digest of it in a cookie that scripts cannot read.</p>
<form method="post" action="/_mock/ui/sign-in">
<label>Admin token <input type="password" name="token" autocomplete="current-password" autofocus></label>
<button type="submit">Sign in</button></form>
<p class="error" role="alert">{message}</p></main></body></html>
"""


@cache
def read(name: str) -> bytes:
    return (STATIC / name).read_bytes()


def sign_in(message: str = "") -> bytes:
    """The sign-in form (plain HTML, no script), with ``message`` under it."""
    return _SIGN_IN.format(message=html.escape(message)).encode()
