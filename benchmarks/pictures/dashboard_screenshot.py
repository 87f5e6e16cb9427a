"""The README's picture of the dashboard, taken from a real run.

    python -m benchmarks dashboard_screenshot [--output docs/images/dashboard.png]

Starts ``mockserver serve`` at real speed, opens ``/_mock/ui`` in chromium (Playwright, headless),
and while the page is open: two streams per tier (standard, priority, Ultrafast) from a lean
client, a few quick requests under two test ids, a refusal (a key without preview access asking
for ``gpt-5.6-sol-ultrafast``: 404) and the speed check. After about eight seconds, with every
stream still running and the chart moving, it saves a screenshot of the page.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from benchmarks.harness import ROOT, arguments
from benchmarks.load.dashboard import CHROMIUM_ARGS, KEY, server
from benchmarks.load_client import request_bytes, run_streams

IMAGES = ROOT / "docs" / "images"
STREAMS = (("default", 700), ("priority", 1700), ("ultrafast", 12000))  # each runs about 13 s


def main() -> None:
    parser = arguments("dashboard_screenshot", __doc__, output=False)
    parser.add_argument("--output", type=Path, default=IMAGES / "dashboard.png", help="where to save the picture")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with server() as (port, _), sync_playwright() as playwright:
        url = f"http://127.0.0.1:{port}"
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1500, "height": 1250})
        page.goto(f"{url}/_mock/ui")
        page.wait_for_selector("#status.live")
        with httpx.Client(base_url=url, headers={"authorization": f"Bearer {KEY}"}) as client:
            quick = {"x-mock-ttft-ms": "0", "x-mock-tokens-per-second": "5000"}
            body = {"model": "gpt-5.6-mini", "messages": [{"role": "user", "content": "Say hello"}]}
            for test_id in ("test_checkout", "test_search", "test_checkout"):
                client.post("/v1/chat/completions", json=body, headers={**quick, "x-mock-test-id": test_id})
            refused = {"model": "gpt-5.6-sol-ultrafast", "messages": [{"role": "user", "content": "Hi"}]}
            headers = {"authorization": "Bearer sk-mock-standard", "x-mock-test-id": "test_no_preview"}
            client.post("/v1/chat/completions", json=refused, headers=headers)
        requests = []
        for tier, tokens in STREAMS:
            stream = {
                "model": "gpt-5.6-sol",
                "stream": True,
                "messages": [{"role": "user", "content": "Write a long story"}],
            }
            if tier != "default":
                stream["service_tier"] = tier
            headers = {"authorization": f"Bearer {KEY}", "x-mock-output-tokens": str(tokens), "x-mock-test-id": "demo"}
            requests += [request_bytes(port, "/v1/chat/completions", stream, headers)] * 2
        with ThreadPoolExecutor(1) as pool:
            running = pool.submit(lambda: asyncio.run(run_streams(port, requests)))
            time.sleep(1.0)
            page.click("#speed-check")
            time.sleep(7.0)
            args.output.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(args.output), full_page=False)
            running.result()
        browser.close()
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
