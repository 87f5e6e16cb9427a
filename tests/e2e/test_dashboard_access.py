"""Who may open the dashboard, and what it may load: as safe as the control plane.

On loopback with no admin token it opens at once. With an admin token (required off loopback),
the page is refused without it: the sign-in form answers 401, a wrong token is refused again, and
the right one sets an ``HttpOnly``, ``SameSite=Strict`` cookie (a digest, never the token) that the
page's own requests then carry. A request from another origin to ``/_mock/events`` gets a 403.
Every reply of the page carries a Content-Security-Policy that allows its own scripts only.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mockserver import MockServer
from mockserver.api import guard
from mockserver.api.control import pages
from tests.e2e.browser import chromium, watched

TOKEN = "dashboard-test-token"


@pytest.fixture(scope="module")
def guarded() -> Iterator[MockServer]:
    with MockServer(time_scale=0, seed=1, admin_token=TOKEN) as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as running:
        yield running


def test_without_the_token_the_page_and_its_feed_are_refused(guarded: MockServer) -> None:
    page = httpx.get(f"{guarded.url}/_mock/ui")
    assert page.status_code == 401
    assert 'name="token"' in page.text and "<script" not in page.text  # the sign-in form, no data
    events = httpx.get(f"{guarded.url}/_mock/events")
    assert events.status_code == 401
    assert events.json()["error"]["code"] == "admin_token_required"
    wrong = httpx.post(f"{guarded.url}/_mock/ui/sign-in", data={"token": "nope"})
    assert wrong.status_code == 401 and "is not this server" in wrong.text
    assert "set-cookie" not in wrong.headers


def test_the_token_is_asked_once_and_kept_in_an_httponly_strict_cookie(guarded: MockServer, browser: Any) -> None:
    seen = watched(browser)
    page = seen.page
    seen.expected_statuses.add(401)  # the first visit: the page refused, the form in its place
    first = page.goto(f"{guarded.url}/_mock/ui")
    assert first is not None and first.status == 401
    page.fill("input[name=token]", TOKEN)
    page.click("button[type=submit]")
    page.wait_for_selector("#status.live")
    (cookie,) = page.context.cookies()
    assert cookie["name"] == guard.ADMIN_COOKIE
    assert cookie["value"] == guard.cookie_value(TOKEN) and TOKEN not in cookie["value"]
    assert cookie["httpOnly"] is True and cookie["sameSite"] == "Strict" and cookie["path"] == "/_mock/"
    assert page.evaluate("() => document.cookie") == ""  # scripts cannot read it
    page.reload()
    page.wait_for_selector("#status.live")  # not asked again
    page.wait_for_function("() => document.querySelectorAll('#accounts tbody tr').length > 0")
    assert seen.hosts_other_than(guarded.url) == []
    assert seen.unexpected_errors() == []
    page.context.close()


def test_a_cross_origin_request_to_the_feed_is_refused(guarded: MockServer) -> None:
    own = {"authorization": f"Bearer {TOKEN}"}
    for headers in ({"origin": "http://evil.example"}, {"sec-fetch-site": "cross-site"}):
        reply = httpx.get(f"{guarded.url}/_mock/events", headers={**own, **headers})
        assert reply.status_code == 403
        assert reply.json()["error"]["code"] == "cross_origin_control_plane"
    cookie = {"cookie": f"{guard.ADMIN_COOKIE}={guard.cookie_value(TOKEN)}", "origin": "http://evil.example"}
    assert httpx.post(f"{guarded.url}/_mock/reset", headers=cookie).status_code == 403


def test_every_file_of_the_page_allows_only_its_own_scripts(guarded: MockServer) -> None:
    own = {"authorization": f"Bearer {TOKEN}"}
    for path in ("/_mock/ui", "/_mock/ui/app.js", "/_mock/ui/chart.js", "/_mock/ui/app.css"):
        reply = httpx.get(f"{guarded.url}{path}", headers=own)
        assert reply.status_code == 200
        policy = reply.headers["content-security-policy"]
        assert "script-src 'self'" in policy and "default-src 'none'" in policy
        assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
        assert reply.headers["x-content-type-options"] == "nosniff"
    html = httpx.get(f"{guarded.url}/_mock/ui", headers=own).text
    assert "http://" not in html and "https://" not in html  # no other host named
    assert httpx.get(f"{guarded.url}/_mock/ui/other.js", headers=own).status_code == 404


def test_every_file_of_the_page_ships_in_the_package() -> None:
    for name in ("index.html", *pages.ASSETS):
        assert (pages.STATIC / name).is_file()
        assert b"//cdn" not in (pages.STATIC / name).read_bytes()
