"""``POST /v1/moderations`` over HTTP: the live shape, rules from the fixture, every input form."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mockserver import MockServer
from mockserver.config.moderation import CATEGORIES
from tests.conftest import fixture_with

RULES = [
    {"pattern": r"(?i)\bhit him\b", "categories": ["violence", "harassment/threatening"]},
    {"pattern": r"forbidden\.png$", "categories": ["sexual"], "input_types": ["image"]},
]


@pytest.fixture(scope="module")
def ruled() -> Iterator[httpx.Client]:
    with (
        MockServer(fixture=fixture_with(moderation={"rules": RULES}), time_scale=0, seed=5) as running,
        httpx.Client(base_url=running.url, headers={"authorization": "Bearer sk-mock-standard"}) as http,
    ):
        yield http


def moderate(http: httpx.Client, value: Any, **body: Any) -> dict[str, Any]:
    reply = http.post("/v1/moderations", json={"input": value, **body})
    assert reply.status_code == 200, reply.text
    result: dict[str, Any] = reply.json()
    return result


def flagged_in(result: dict[str, Any]) -> set[str]:
    return {category for category, on in result["categories"].items() if on}


def test_nothing_is_flagged_by_default(http: httpx.Client) -> None:
    body = moderate(http, "I will hit him")
    assert body["id"].startswith("modr-") and body["model"] == "omni-moderation-latest"
    (result,) = body["results"]
    assert result["flagged"] is False and list(result["categories"]) == list(CATEGORIES)
    assert set(result["category_scores"]) == set(result["category_applied_input_types"]) == set(CATEGORIES)


def test_a_rule_flags_its_categories_and_nothing_else(ruled: httpx.Client) -> None:
    harmless, harmful = moderate(ruled, ["Good morning", "Then I will hit him."])["results"]
    assert not harmless["flagged"] and not flagged_in(harmless)
    assert harmful["flagged"] and flagged_in(harmful) == {"violence", "harassment/threatening"}


def test_parts_make_one_input_and_images_follow_image_rules(ruled: httpx.Client) -> None:
    parts = [
        {"type": "text", "text": "What is in this picture?"},
        {"type": "image_url", "image_url": {"url": "https://example.com/forbidden.png"}},
    ]
    (result,) = moderate(ruled, parts)["results"]
    assert flagged_in(result) == {"sexual"}
    assert result["category_applied_input_types"]["sexual"] == ["text", "image"]
    (image,) = moderate(ruled, [{"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}])[
        "results"
    ]
    assert not image["flagged"] and image["category_applied_input_types"]["hate"] == []


@pytest.mark.parametrize(
    "body",
    [
        {"input": []},
        {"input": 5},
        {"input": [{"type": "video", "url": "x"}]},
        {"input": "x", "model": "gpt-5.6-sol"},
        {"input": "x", "model": "text-moderation-999"},
        {"input": "x", "temperature": 1},
        {},
    ],
)
def test_a_bad_request_gets_an_api_error(http: httpx.Client, body: dict[str, Any]) -> None:
    reply = http.post("/v1/moderations", json=body)
    assert reply.status_code in (400, 404), reply.text
    assert set(reply.json()["error"]) == {"message", "type", "param", "code"}


def test_moderations_are_journalled_and_counted(server: MockServer) -> None:
    server.reset()
    try:
        headers = {"authorization": "Bearer sk-mock-preview"}
        httpx.post(f"{server.url}/v1/moderations", headers=headers, json={"input": "hello there"})
        call = server.requests.assert_called_once(path="/v1/moderations")
        assert call.model == "omni-moderation-latest" and call.status == 200
        usage = httpx.get(f"{server.url}/_mock/usage").json()["by_model"]["omni-moderation-latest"]
        assert usage["requests"] == 1 and usage["cost_usd"] == 0
    finally:
        server.reset()
