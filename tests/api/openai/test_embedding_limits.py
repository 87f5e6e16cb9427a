"""Large embeddings requests over HTTP: they fit the process's budget or wait, then get the live,
retryable 503, and their weight is always given back (reply sent, refused, or the client gone)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from mockserver import MockServer
from mockserver.harness.faults import injection
from mockserver.service import embeddings_budget

PREVIEW = {"authorization": "Bearer sk-mock-preview"}
WEIGHT = 700 * 1_536
# 700 inputs at 1,536 dimensions: over a MiB of numbers, yet quick to make (one short word each).
LARGE_BODY: dict[str, Any] = {"model": "text-embedding-3-small", "input": ["word"] * 700, "encoding_format": "float"}


@pytest.fixture(scope="module")
def running() -> Iterator[MockServer]:
    with MockServer(time_scale=0, seed=1) as server:  # in this process: it shares embeddings_budget.LARGE
        yield server


@pytest.fixture
def places(monkeypatch: pytest.MonkeyPatch) -> Iterator[embeddings_budget.LargeWork]:
    fresh = embeddings_budget.LargeWork(budget=2 * WEIGHT, wait_s=0)  # room for two of LARGE_BODY
    monkeypatch.setattr(embeddings_budget, "LARGE", fresh)
    yield fresh


def settled(places: embeddings_budget.LargeWork, expected: int = 0) -> int:
    """The weight held once the server has finished with its exchanges (it gives it back as a reply ends)."""
    deadline = time.monotonic() + 5
    while places.held != expected and time.monotonic() < deadline:
        time.sleep(0.01)
    return places.held


def test_the_budget_counts_only_requests_past_the_small_size() -> None:
    assert embeddings_budget.LARGE.weight(WEIGHT) == WEIGHT
    assert embeddings_budget.LARGE.weight(40 * 1_536) == 0  # 40 inputs at full size never wait


def test_a_large_request_with_every_place_taken_gets_the_live_retryable_503(
    running: MockServer, places: embeddings_budget.LargeWork
) -> None:
    assert places.try_take(WEIGHT) and places.try_take(WEIGHT)
    with httpx.Client(base_url=running.url, headers=PREVIEW, timeout=30) as http:
        refused = http.post("/v1/embeddings", json=LARGE_BODY)
        assert refused.status_code == 503, refused.text
        assert refused.json() == {
            "error": {
                "message": "The engine is currently overloaded, please try again later",
                "type": "server_error",
                "param": None,
                "code": None,
            }
        }
        assert refused.headers["retry-after"] == "1" and refused.headers["x-should-retry"] == "true"
        small = http.post("/v1/embeddings", json={**LARGE_BODY, "input": ["word"] * 10})
        assert small.status_code == 200  # small requests never wait
        strict = openai.OpenAI(
            base_url=f"{running.url}/v1", api_key="sk-mock-preview", max_retries=0, _strict_response_validation=True
        )
        with pytest.raises(openai.InternalServerError) as raised:
            strict.embeddings.create(**LARGE_BODY)
        assert raised.value.status_code == 503 and "overloaded" in raised.value.message
        places.release(WEIGHT)
        served = http.post("/v1/embeddings", json=LARGE_BODY)
        assert served.status_code == 200 and len(served.json()["data"]) == 700
    assert (
        settled(places, WEIGHT) == WEIGHT
    )  # the served request gave its weight back; the one taken above is still held


def test_the_weight_is_given_back_when_the_request_is_refused_or_the_client_leaves(
    running: MockServer, places: embeddings_budget.LargeWork
) -> None:
    with httpx.Client(base_url=running.url, headers=PREVIEW, timeout=30) as http:
        malformed = http.post("/v1/embeddings", json={**LARGE_BODY, "input": ["word"] * 699 + [""]})
        assert malformed.status_code == 400
        assert settled(places) == 0
        with http.stream("POST", "/v1/embeddings", json=LARGE_BODY) as partial:
            assert partial.status_code == 200
            next(partial.iter_raw())  # the reply (about 20 MB) has started; the client leaves here
    assert settled(places) == 0


def test_the_sdk_retries_the_refusal_and_gets_its_vectors(
    running: MockServer, places: embeddings_budget.LargeWork
) -> None:
    assert places.try_take(WEIGHT) and places.try_take(WEIGHT)
    client = openai.OpenAI(
        base_url=f"{running.url}/v1", api_key="sk-mock-preview", max_retries=2, _strict_response_validation=True
    )
    retried: list[int] = []

    def free_room(response: httpx.Response) -> None:  # the second attempt fits
        retried.append(response.status_code)
        if response.status_code == 503 and places.held == 2 * WEIGHT:
            places.release(WEIGHT)

    client._client.event_hooks["response"].append(free_room)
    reply = client.embeddings.create(**LARGE_BODY)
    assert retried[0] == 503 and len(reply.data) == 700


@pytest.mark.parametrize("inputs", [3, 700])  # a reply sent at once, and one sent a mebibyte at a time
def test_a_delayed_reply_is_sent_as_encoded_not_parsed_and_written_again(
    running: MockServer, monkeypatch: pytest.MonkeyPatch, inputs: int
) -> None:
    body = {**LARGE_BODY, "input": ["word"] * inputs}
    with httpx.Client(base_url=running.url, headers=PREVIEW, timeout=30) as http:
        plain = http.post("/v1/embeddings", json=body)

        def rewritten(*args: Any, **kwargs: Any) -> None:  # 128 MB through json.dumps held the loop for seconds
            raise AssertionError("the encoded reply was parsed and written again")

        monkeypatch.setattr(injection, "JSONResponse", rewritten)
        delayed = http.post("/v1/embeddings", json=body, headers={"x-mock-fault": "ttft_ms=1"})
    assert delayed.status_code == 200, delayed.text
    assert delayed.json()["data"] == plain.json()["data"]
