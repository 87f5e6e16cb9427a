"""A real browser for the dashboard's tests: Playwright for Python driving Debian's ``chromium``.

Playwright's own browser download comes from a host CI cannot reach, so it is pointed at the
system's browser (``executable_path``); ``.ci/run`` installs ``chromium`` with apt. Every page
opened here records the requests it made and the console errors it logged, so a test can check
that the page talked to no host but the server's and logged nothing wrong.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@dataclass
class Watched:
    """A page, with the URLs it requested and the console errors it logged."""

    page: Any
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    # Chromium logs every reply with an error status as a console error ("Failed to load resource: ...
    # 400"); a test that makes the server refuse on purpose names the statuses it expects here.
    expected_statuses: set[int] = field(default_factory=set)

    def unexpected_errors(self) -> list[str]:
        expected = tuple(f"status of {status} " for status in self.expected_statuses)
        return [
            e for e in self.errors if not (e.startswith("Failed to load resource") and any(s in e for s in expected))
        ]

    def hosts_other_than(self, origin: str) -> list[str]:
        return [url for url in self.requests if not url.startswith(origin + "/") and not url.startswith("data:")]


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless chromium, or the test is skipped where there is none, except in CI (``CI`` set),
    where a missing browser fails the test: ``.ci/run`` installs it."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not shutil.which(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed, and CI must run the browser tests (apt-get install chromium)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def watched(browser: Any) -> Watched:
    """A new page in a fresh context (its own cookies), recording requests and console errors."""
    page = browser.new_context().new_page()
    seen = Watched(page)
    page.on("request", lambda request: seen.requests.append(request.url))
    page.on("console", lambda message: seen.errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: seen.errors.append(str(error)))
    return seen
