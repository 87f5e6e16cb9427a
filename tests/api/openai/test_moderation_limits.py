"""``POST /v1/moderations`` within its limits: one image per request (live), a bounded input array, and
each text read up to the live models' 32,768 tokens (truncated past them, as OpenAI documents)."""

from __future__ import annotations

import httpx
import openai
import pytest

from mockserver import MockServer
from mockserver.api.openai.moderations.plan import MAX_INPUT_TOKENS, MAX_INPUTS
from mockserver.engine import tokens
from tests.conftest import fixture_with

IMAGE = {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}


def test_an_array_past_the_maximum_is_refused_before_any_work(http: httpx.Client) -> None:
    # 3 bytes of body per input: 100,000 of them once made a 117 MB reply; a 32 MiB body, gigabytes.
    refused = http.post("/v1/moderations", json={"input": [""] * 100_000})
    assert refused.status_code == 400
    assert refused.json()["error"] == {
        "message": f"Invalid 'input': array too long. Expected an array with maximum length {MAX_INPUTS}, "
        "but got an array with length 100000 instead.",
        "type": "invalid_request_error",
        "param": "input",
        "code": "array_above_max_length",
    }
    parts = http.post("/v1/moderations", json={"input": [{"type": "text", "text": "x"}] * (MAX_INPUTS + 1)})
    assert parts.status_code == 400 and parts.json()["error"]["code"] == "array_above_max_length"
    at_the_bound = http.post("/v1/moderations", json={"input": ["x"] * MAX_INPUTS})
    assert at_the_bound.status_code == 200 and len(at_the_bound.json()["results"]) == MAX_INPUTS


def test_more_than_one_image_gets_the_live_error(server: MockServer) -> None:
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="sk-mock-preview", _strict_response_validation=True)
    with pytest.raises(openai.BadRequestError) as raised:
        client.moderations.create(input=[IMAGE, {"type": "text", "text": "and"}, IMAGE])  # type: ignore[list-item]
    assert raised.value.body == {
        "message": "Number of images (2) exceeds maximum of 1",
        "type": "invalid_request_error",
        "param": "input",
        "code": "too_many_images",
    }
    (one,) = client.moderations.create(input=[{"type": "text", "text": "see"}, IMAGE]).results  # type: ignore[list-item]
    assert not one.flagged


def test_a_text_past_the_token_limit_is_moderated_on_its_first_32768_tokens() -> None:
    rules = [{"pattern": r"(?i)\bhit him\b", "categories": ["violence"]}]
    filler = "word " * 40_000  # 40,000 tokens: past the limit
    assert tokens.count(filler) > MAX_INPUT_TOKENS == 32_768
    with (
        MockServer(fixture=fixture_with(moderation={"rules": rules}), time_scale=0, seed=4) as server,
        openai.OpenAI(
            base_url=server.base_url, api_key="sk-mock-preview", max_retries=0, _strict_response_validation=True
        ) as client,
    ):
        early, late = client.moderations.create(input=["I will hit him. " + filler, filler + "I will hit him."]).results
        assert early.flagged and early.categories.violence
        assert not late.flagged  # past the first 32,768 tokens: left out of the check, not refused
        short = client.moderations.create(input="I will hit him.")
        assert short.results[0].flagged
        counted = [call.usage["input_tokens"] for call in server.requests.filter(path="/v1/moderations")]
    assert counted == [2 * MAX_INPUT_TOKENS, tokens.count("I will hit him.")]


@pytest.mark.skipif(not tokens.exact(), reason="needs the real tokenizer: a character of several tokens")
def test_a_short_text_of_many_tokens_per_character_is_truncated_too() -> None:
    # "𝕏" is one character and three tokens: 12,000 of them are 36,000 tokens in 12,000 characters.
    rules = [{"pattern": r"(?i)\bhit him\b", "categories": ["violence"]}]
    text = "𝕏" * 12_000 + " I will hit him."
    assert len(text) < MAX_INPUT_TOKENS < tokens.count(text)
    with (
        MockServer(fixture=fixture_with(moderation={"rules": rules}), time_scale=0, seed=4) as server,
        openai.OpenAI(
            base_url=server.base_url, api_key="sk-mock-preview", max_retries=0, _strict_response_validation=True
        ) as client,
    ):
        (result,) = client.moderations.create(input=text).results
        assert not result.flagged  # the threat is past the first 32,768 tokens
        (call,) = server.requests.filter(path="/v1/moderations")
    assert call.usage["input_tokens"] == MAX_INPUT_TOKENS
