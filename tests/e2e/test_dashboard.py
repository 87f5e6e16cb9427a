"""The dashboard (``/_mock/ui``) in a real browser, against a real server at real speed, fed by the
official SDK: streams appear with their tiers and achieved rates and leave when they end; the
controls change the pacing through ``PATCH /_mock/config`` and show the server's refusals; the
journal filters by test id and shows a refusal's error; the usage table shows the prompt tokens read
from and written to the cache; the speed check measures every tier.

Every page also checks that it requested nothing from any host but the server's and logged no
console error. Rates are read on the real clock on a shared, busy machine, so the bounds here are
generous (:data:`RATE_SLACK`); ``benchmarks/load/dashboard.py`` measures the tight figures.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from mockserver import MockServer
from tests.conftest import PREVIEW_KEY, STANDARD_KEY
from tests.e2e.browser import Watched, chromium, watched

RATE_SLACK = 0.15  # the figure is 5% (2% for a changed rate); the benchmark checks those
TIER_RATES = {"default": 54.0, "priority": 135.0, "ultrafast": 750.0}


@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    with MockServer(time_scale=1, seed=1) as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as running:
        yield running


@pytest.fixture
def dashboard(server: MockServer, browser: Any) -> Iterator[Watched]:
    server.reset()
    seen = watched(browser)
    seen.page.goto(f"{server.url}/_mock/ui")
    seen.page.wait_for_selector("#status.live")
    yield seen
    assert seen.hosts_other_than(server.url) == []
    assert seen.unexpected_errors() == []
    seen.page.context.close()
    server.reset()


def sdk(server: MockServer, key: str = PREVIEW_KEY) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key=key, max_retries=0, _strict_response_validation=True)


def stream_in_thread(server: MockServer, tier: str, tokens: int, test_id: str, out: dict[str, Any]) -> threading.Thread:
    """Stream a reply with the SDK in a thread; ``out[tier]`` gets the client's own timings."""

    def run() -> None:
        with sdk(server) as client:
            extra = {} if tier == "default" else {"service_tier": tier}
            stream = client.chat.completions.create(
                model="gpt-5.6-sol",
                messages=[{"role": "user", "content": "Write a long story"}],
                stream=True,
                stream_options={"include_usage": True},
                extra_headers={"x-mock-output-tokens": str(tokens), "x-mock-test-id": test_id},
                **extra,  # type: ignore[arg-type]
            )
            first = last = None
            usage = None
            for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    last = time.monotonic()
                    first = first or last
                if chunk.usage is not None:
                    usage = chunk.usage.completion_tokens
            out[tier] = {"first": first, "last": last, "tokens": usage}

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def rows(page: Any) -> dict[str, dict[str, str]]:
    """The streams view's rows by tier: each cell's text by its class."""
    found: dict[str, dict[str, str]] = page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('#streams tbody tr')].map(tr => [
            tr.dataset.tier,
            Object.fromEntries([...tr.cells].filter(c => c.classList.length)
                .map(c => [c.classList[c.classList.length - 1], c.textContent]))
        ]))"""
    )
    return found


def test_three_tiers_appear_at_their_rates_and_leave_when_they_end(server: MockServer, dashboard: Watched) -> None:
    page, out = dashboard.page, {}
    started = time.monotonic()
    threads = [
        stream_in_thread(server, "default", 430, "three-tiers", out),  # 3 s TTFT, then 8 s at 54
        stream_in_thread(server, "priority", 1350, "three-tiers", out),  # 1.2 s, then 10 s at 135
        stream_in_thread(server, "ultrafast", 7500, "three-tiers", out),  # 0.2 s, then 10 s at 750
    ]
    page.wait_for_function("() => document.querySelectorAll('#streams tbody tr').length === 3", timeout=5000)
    appeared = time.monotonic() - started
    # Generous for a busy CI machine: the rows come while the standard stream still waits out its 3 s TTFT.
    assert appeared < 2.5, f"the three streams took {appeared:.2f} s to appear"
    assert set(rows(page)) == set(TIER_RATES)

    time.sleep(max(0.0, started + 6.0 - time.monotonic()))  # the standard stream has run for about 3 s
    shown = rows(page)
    for tier, rate in TIER_RATES.items():
        assert float(shown[tier]["target"]) == rate
        achieved = float(shown[tier]["achieved"])
        assert abs(achieved / rate - 1) < RATE_SLACK, f"{tier}: {achieved} tokens/s shown against {rate}"

    for thread in threads:
        thread.join(timeout=30)
    page.wait_for_function("() => document.querySelectorAll('#streams tbody tr').length === 0", timeout=3000)
    assert {tier: out[tier]["tokens"] for tier in TIER_RATES} == {"default": 430, "priority": 1350, "ultrafast": 7500}


def test_the_rate_set_in_the_form_paces_the_next_stream(server: MockServer, dashboard: Watched) -> None:
    page = dashboard.page
    page.select_option("#rate-tier", "ultrafast")
    page.fill("#rate-value", "300")
    page.click("#apply-profile")
    page.wait_for_function("() => document.querySelector('#rate-value').placeholder === '300'")
    assert page.text_content("#profile-error") == ""

    out: dict[str, Any] = {}
    stream_in_thread(server, "ultrafast", 900, "form-rate", out).join(timeout=30)
    run = out["ultrafast"]
    rate = (run["tokens"] - 1) / (run["last"] - run["first"])
    assert abs(rate / 300 - 1) < RATE_SLACK, f"paced at {rate:.1f} tokens/s after setting 300"


@pytest.mark.parametrize(
    ("form", "field", "value", "error", "words"),
    [
        ("#apply-profile", "#rate-value", "-5", "#profile-error", "tokens_per_second"),
        ("#apply-profile", "#rate-value", "fast", "#profile-error", "tokens_per_second"),
        ("#apply-capacity", "#capacity", "lots", "#capacity-error", "ultrafast_concurrency"),
        ("#apply-time-scale", "#time-scale", "-1", "#time-scale-error", "time_scale"),
        ("#apply-fault", "#fault-spec", "status=999", "#fault-error", "status"),
    ],
)
def test_an_invalid_value_shows_the_servers_message_and_changes_nothing(
    server: MockServer, dashboard: Watched, form: str, field: str, value: str, error: str, words: str
) -> None:
    page = dashboard.page
    dashboard.expected_statuses.add(400)
    before = httpx.get(f"{server.url}/_mock/config").json()
    page.fill(field, value)
    page.click(form)
    page.wait_for_function(f"() => document.querySelector('{error}').textContent !== ''")
    shown = page.text_content(error) or ""
    patch = {
        "#rate-value": {"profiles": {"ultrafast": {"tokens_per_second": _typed(value)}}},
        "#capacity": {"capacity": {"ultrafast_concurrency": _typed(value)}},
        "#time-scale": {"time_scale": _typed(value)},
        "#fault-spec": {"faults": {"rules": [{"fault": value, "count": 1}]}},
    }[field]
    refused = httpx.patch(f"{server.url}/_mock/config", json=patch)
    assert refused.status_code == 400
    assert shown == refused.json()["error"]["message"]
    assert words in shown
    assert httpx.get(f"{server.url}/_mock/config").json() == before


def _typed(value: str) -> Any:
    """The value as the page sends it: a number when it reads as one (JSON has no -1.0 for -1)."""
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


def test_a_fault_set_in_the_form_hits_the_next_requests_only(server: MockServer, dashboard: Watched) -> None:
    page = dashboard.page
    page.fill("#fault-spec", "status=503")
    page.fill("#fault-count", "2")
    page.click("#apply-fault")
    page.wait_for_function("() => document.querySelector('#fault-error').textContent === ''")
    page.wait_for_timeout(300)
    with sdk(server) as client:
        statuses = []
        for _ in range(3):
            try:
                client.with_options(timeout=30).models.list()
                client.chat.completions.create(
                    model="gpt-5.6-sol",
                    messages=[{"role": "user", "content": "Hi"}],
                    extra_headers={"x-mock-ttft-ms": "0", "x-mock-tokens-per-second": "100000"},
                )
                statuses.append(200)
            except openai.APIStatusError as exc:
                statuses.append(exc.status_code)
    assert statuses == [503, 503, 200]


def test_the_journal_filters_by_test_id_and_shows_a_refusal(server: MockServer, dashboard: Watched) -> None:
    page = dashboard.page
    fast = {"x-mock-ttft-ms": "0", "x-mock-tokens-per-second": "100000"}
    with sdk(server) as preview, sdk(server, STANDARD_KEY) as standard:
        for test_id in ("journal-a", "journal-b", "journal-a"):
            preview.chat.completions.create(
                model="gpt-5.6-sol",
                messages=[{"role": "user", "content": "Hi"}],
                extra_headers={**fast, "x-mock-test-id": test_id},
            )
        with pytest.raises(openai.NotFoundError):
            standard.chat.completions.create(
                model="gpt-5.6-sol-ultrafast",
                messages=[{"role": "user", "content": "Hi"}],
                extra_headers={"x-mock-test-id": "journal-refused"},
            )
    page.wait_for_function("() => document.querySelectorAll('#journal tbody tr').length >= 4")

    page.fill("#filter-test-id", "journal-a")
    page.press("#filter-test-id", "Enter")
    page.wait_for_function("() => document.querySelectorAll('#journal tbody tr').length === 2")
    test_ids = page.eval_on_selector_all("#journal tbody tr td.test-id", "cells => cells.map(c => c.textContent)")
    assert test_ids == ["journal-a", "journal-a"]

    page.fill("#filter-test-id", "journal-refused")
    page.press("#filter-test-id", "Enter")
    page.wait_for_function("() => document.querySelectorAll('#journal tbody tr').length === 1")
    row = page.locator("#journal tbody tr")
    assert "refused" in (row.get_attribute("class") or "")
    assert row.locator("td.status").text_content() == "404"
    assert "model_not_found" in (row.locator("td.error").text_content() or "")
    row.click()
    page.wait_for_function("() => document.querySelector('#detail-reply').textContent.includes('model_not_found')")
    detail = page.text_content("#detail-reply") or ""
    assert '"status": 404' in detail and '"param"' in detail and "invalid_request_error" in detail
    assert "does not exist or you do not have access to it" in detail  # the error body's message
    request = page.text_content("#detail-request") or ""
    assert STANDARD_KEY not in request and "sk-moc" in request  # the key, masked as the journal masks it


def test_the_usage_table_shows_the_prompt_tokens_read_from_and_written_to_the_cache(
    server: MockServer, dashboard: Watched
) -> None:
    page = dashboard.page
    long_prompt = "Economy class is booked for flights under six hours; business class above that. " * 90
    fast = {"x-mock-ttft-ms": "0", "x-mock-tokens-per-second": "100000", "x-mock-output-tokens": "1"}
    with sdk(server) as client:
        replies = [
            client.chat.completions.create(
                model="gpt-5.6-sol", messages=[{"role": "system", "content": long_prompt}], extra_headers=fast
            )
            for _ in range(2)
        ]
    details = [r.usage.prompt_tokens_details for r in replies if r.usage is not None]
    assert details[0] is not None and details[1] is not None
    written, read = details[0].cache_write_tokens, details[1].cached_tokens
    assert written is not None and read is not None and read >= 1024
    shown = "n => [...document.querySelectorAll('#usage tbody tr')].some(tr => tr.cells[2].textContent === String(n))"
    page.wait_for_function(shown, arg=2)
    table = page.evaluate(
        """() => [...document.querySelectorAll('#usage tr')].map(tr => [...tr.cells].map(c => c.textContent))"""
    )
    header, row, total = table
    assert header == ["tier", "model", "requests", "input", "cached", "cache write", "output", "cost $"]
    assert row[:6] == ["default", "gpt-5.6-sol", "2", str(sum(r.usage.prompt_tokens for r in replies if r.usage)),
                       str(read), str(written)]  # fmt: skip
    assert total[4:6] == [str(read), str(written)]


def test_the_speed_check_shows_each_tiers_rate(dashboard: Watched) -> None:
    page = dashboard.page
    page.click("#speed-check")
    page.wait_for_function("() => document.querySelectorAll('#speed-results .card').length === 4")
    page.wait_for_function(
        "() => [...document.querySelectorAll('#speed-results .card')].some(c => c.dataset.status === 'running')"
    )
    page.wait_for_function(
        "() => [...document.querySelectorAll('#speed-results .card')].every(c => c.dataset.status === 'done')",
        timeout=40000,
    )
    cards = page.eval_on_selector_all(
        "#speed-results .card", "cards => cards.map(c => [c.dataset.tier, c.querySelector('.rate').textContent])"
    )
    rates = {tier: float(text) for tier, text in cards}
    for tier, target in {**TIER_RATES, "flex": 27.0}.items():
        assert abs(rates[tier] / target - 1) < RATE_SLACK, f"{tier}: {rates[tier]} against {target}"


def test_a_speed_check_with_nothing_to_check_shows_the_servers_message(server: MockServer, dashboard: Watched) -> None:
    page = dashboard.page
    dashboard.expected_statuses.add(409)
    revoked = [{"key": "sk-mock-revoked", "status": "revoked", "tiers": ["default"]}]
    assert httpx.patch(f"{server.url}/_mock/config", json={"accounts": revoked}).status_code == 200
    page.click("#speed-check")
    page.wait_for_function("() => document.querySelector('#speed-error').textContent !== ''")
    refused = httpx.post(f"{server.url}/_mock/speed-check")
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "nothing_to_speed_check"
    assert page.text_content("#speed-error") == refused.json()["error"]["message"]
