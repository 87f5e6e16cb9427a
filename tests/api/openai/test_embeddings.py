"""``POST /v1/embeddings`` over HTTP: the four input forms, the live limits and errors, usage,
rate limits, the ledger, the journal, faults and scripted vectors."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import httpx
import numpy as np
import pytest

from mockserver import MockServer
from mockserver.engine import cl100k
from tests.conftest import fixture_with

SMALL = "text-embedding-3-small"
LARGE = "text-embedding-3-large"
INVALID_INPUT = "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference."
PREVIEW = {"authorization": "Bearer sk-mock-preview"}


@pytest.fixture(scope="module")
def scripted() -> Iterator[MockServer]:
    """A server whose scripts fix one text's vector and fail another's request."""
    scripts: list[dict[str, Any]] = [
        {"name": "pinned", "match": {"message": "(?i)capital of france"}, "reply": {"embedding": [0.6, 0.8, 0.0]}},
        {"match": {"message": "(?i)^explode$", "path": "/v1/embeddings"}, "reply": {"error": "status=429"}},
        {"match": {"message": "(?i)capital"}, "reply": {"text": "a chat reply, passed over by embeddings"}},
    ]
    with MockServer(fixture=fixture_with(scripts=scripts), time_scale=0, seed=3) as running:
        yield running


def embed(http: httpx.Client, **body: Any) -> httpx.Response:
    return http.post("/v1/embeddings", json={"model": SMALL, **body})


def vectors(response: httpx.Response) -> list[np.ndarray]:
    assert response.status_code == 200, response.text
    out = []
    for item in response.json()["data"]:
        value = item["embedding"]
        out.append(np.frombuffer(base64.b64decode(value), "<f4") if isinstance(value, str) else np.asarray(value))
    return out


def error_of(response: httpx.Response, status: int = 400) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error: dict[str, Any] = response.json()["error"]
    return error


def test_the_reply_has_the_live_shape(http: httpx.Client) -> None:
    reply = embed(http, input=["one text", "another text"])
    body = reply.json()
    assert reply.headers["content-type"] == "application/json"
    assert body["object"] == "list" and body["model"] == SMALL
    assert [(d["object"], d["index"], len(d["embedding"])) for d in body["data"]] == [
        ("embedding", 0, 1536),
        ("embedding", 1, 1536),
    ]
    assert body["usage"] == {"prompt_tokens": 4, "total_tokens": 4}
    assert int(reply.headers["x-ratelimit-limit-tokens"]) > 0


def test_the_four_input_forms_give_the_same_vectors(http: httpx.Client) -> None:
    text = "Retrieval needs vectors that mean something."
    ids = [15339, 1917]  # "hello world" in cl100k_base
    (as_string,) = vectors(embed(http, input=text))
    (in_array,) = vectors(embed(http, input=[text]))
    (from_ids,) = vectors(embed(http, input=ids))
    (from_nested,) = vectors(embed(http, input=[ids]))
    (hello,) = vectors(embed(http, input="hello world"))
    assert np.array_equal(as_string, in_array)
    assert np.array_equal(from_ids, from_nested) and np.array_equal(from_ids, hello)


def test_usage_counts_cl100k_tokens_and_token_arrays_count_their_length(http: httpx.Client) -> None:
    texts = ["The quick brown fox.", "请写一篇文章。", "x = 1 + 2"]
    assert embed(http, input=texts).json()["usage"]["prompt_tokens"] == sum(cl100k.count(t) for t in texts)
    assert embed(http, input=[[1, 2, 3], [4, 5]]).json()["usage"]["prompt_tokens"] == 5


def test_base64_and_float_carry_the_same_vector(http: httpx.Client) -> None:
    (as_float,) = vectors(embed(http, input="same either way", encoding_format="float"))
    reply = embed(http, input="same either way", encoding_format="base64")
    assert isinstance(reply.json()["data"][0]["embedding"], str)
    (as_base64,) = vectors(reply)
    assert as_float.tolist() == as_base64.astype(np.float64).tolist()


def test_dimensions_shorten_to_a_unit_vector(http: httpx.Client) -> None:
    for model, size in ((SMALL, 1536), (LARGE, 3072)):
        (full,) = vectors(http.post("/v1/embeddings", json={"model": model, "input": "hi", "encoding_format": "float"}))
        assert len(full) == size
        for dimensions in (1, 256, size):
            (short,) = vectors(embed(http, model=model, input="hi", dimensions=dimensions))
            assert len(short) == dimensions and abs(np.linalg.norm(short) - 1) < 1e-6


@pytest.mark.parametrize(
    "value",
    [
        "",
        [],
        [""],
        ["fine", ""],
        [[]],
        [-1],
        [100_256],
        [[1, 2], [3, -4]],
        ["text", 5],
        [[1], "text"],
        [1.5],
        [True],
        {"text": "an object"},
        7,
        None,
        ["a"] * 2049,
        [[1]] * 2049,
    ],
)
def test_a_malformed_input_gets_the_live_error(http: httpx.Client, value: Any) -> None:
    error = error_of(embed(http, input=value))
    assert error == {"message": INVALID_INPUT, "type": "invalid_request_error", "param": None, "code": None}


def test_the_input_limits_hold_at_their_bounds(http: httpx.Client) -> None:
    assert embed(http, input=["a"] * 2048).json()["usage"]["prompt_tokens"] == 2048
    assert embed(http, input=[1] * 8192).status_code == 200
    too_long = error_of(embed(http, input=[1] * 8193))
    assert too_long["message"] == "Invalid 'input': maximum context length is 8192 tokens."
    text = "hello" + " hello" * 8191  # 8,192 tokens: "hello" and " hello" are one token each
    assert cl100k.count(text) == 8192 and embed(http, input=text).status_code == 200
    assert error_of(embed(http, input=text + " hello"))["message"] == too_long["message"]


def test_a_request_past_300000_tokens_in_all_gets_the_live_error(http: httpx.Client) -> None:
    error = error_of(embed(http, input=[[1] * 8000] * 38))  # 304,000 tokens
    assert error == {
        "message": "Requested 304000 tokens, max 300000 tokens per request",
        "type": "max_tokens_per_request",
        "param": None,
        "code": "max_tokens_per_request",
    }
    assert embed(http, input=[[1] * 7500] * 40).status_code == 200  # exactly 300,000


def test_the_other_parameters_are_checked(http: httpx.Client) -> None:
    assert error_of(embed(http, input="x", dimensions=1537))["code"] == "integer_above_max_value"
    assert error_of(embed(http, input="x", dimensions=0))["code"] == "integer_below_min_value"
    assert error_of(embed(http, input="x", encoding_format="int8"))["code"] == "invalid_value"
    assert error_of(embed(http, input="x", temperature=1))["message"].startswith("Unrecognized request argument")
    assert error_of(http.post("/v1/embeddings", json={"input": "x"}))["param"] == "model"
    assert error_of(http.post("/v1/embeddings", json={"model": SMALL}))["message"].startswith("Missing required")
    assert embed(http, input="x", user="user-1").status_code == 200


def test_models_serve_only_their_own_endpoint(http: httpx.Client) -> None:
    refused = error_of(embed(http, model="gpt-5.6-sol", input="x"))
    assert refused["param"] == "model" and "does not support embeddings" in refused["message"]
    chat = http.post("/v1/chat/completions", json={"model": SMALL, "messages": [{"role": "user", "content": "x"}]})
    assert error_of(chat, 404)["message"].startswith("This is not a chat model")
    assert error_of(embed(http, model="text-embedding-ada-999", input="x"), 404)["code"] == "model_not_found"


def test_embedding_models_are_listed_per_account(server: MockServer) -> None:
    def listed(key: str) -> set[str]:
        reply = httpx.get(f"{server.url}/v1/models", headers={"authorization": f"Bearer {key}"})
        return {m["id"] for m in reply.json()["data"]}

    assert {SMALL, LARGE, "omni-moderation-latest"} <= listed("sk-mock-standard")
    assert listed("sk-mock-mini-only").isdisjoint({SMALL, LARGE})  # its project may use gpt-5.6-mini only
    refused = httpx.post(
        f"{server.url}/v1/embeddings",
        headers={"authorization": "Bearer sk-mock-mini-only"},
        json={"model": SMALL, "input": "x"},
    )
    assert refused.status_code == 403


def test_input_tokens_count_against_the_token_window(server: MockServer) -> None:
    headers = {"authorization": "Bearer sk-mock-low-limits"}  # 3 requests and 2,000 tokens per minute
    server.reset()
    try:
        first = httpx.post(f"{server.url}/v1/embeddings", headers=headers, json={"model": SMALL, "input": [5] * 1500})
        assert first.status_code == 200
        assert first.headers["x-ratelimit-remaining-tokens"] == "500"
        second = httpx.post(f"{server.url}/v1/embeddings", headers=headers, json={"model": SMALL, "input": [5] * 600})
        assert error_of(second, 429)["code"] == "rate_limit_exceeded"
    finally:
        server.reset()


def test_the_ledger_and_the_journal_record_embeddings(server: MockServer) -> None:
    server.reset()
    try:
        httpx.post(f"{server.url}/v1/embeddings", headers=PREVIEW, json={"model": LARGE, "input": [7] * 1000})
        usage = httpx.get(f"{server.url}/_mock/usage").json()["by_model"][LARGE]
        assert usage["input_tokens"] == 1000 and usage["output_tokens"] == 0
        assert usage["cost_usd"] == pytest.approx(1000 * 0.13 / 1_000_000)
        call = server.requests.assert_called_once(path="/v1/embeddings")
        assert call.model == LARGE and call.status == 200
    finally:
        server.reset()


def test_faults_apply(http: httpx.Client) -> None:
    failed = embed(http, input="x", encoding_format="float", **{})
    assert failed.status_code == 200
    faulted = http.post("/v1/embeddings", json={"model": SMALL, "input": "x"}, headers={"x-mock-fault": "status=503"})
    assert faulted.status_code == 503 and faulted.json()["error"]["type"] == "server_error"
    late = http.post(
        "/v1/embeddings",
        json={"model": SMALL, "input": "x", "encoding_format": "float"},
        headers={"x-mock-fault": "ttft_ms=50"},
    )
    assert vectors(late)[0].tolist() == vectors(failed)[0].tolist()


def test_a_script_fixes_the_vector_of_the_texts_it_matches(scripted: MockServer) -> None:
    with httpx.Client(base_url=scripted.url, headers=PREVIEW) as http:
        reply = embed(http, input=["What is the capital of France?", "unrelated"], encoding_format="float")
        pinned, generated = vectors(reply)
        assert pinned.tolist() == pytest.approx([0.6, 0.8, 0.0])
        assert len(generated) == 1536
        (short,) = vectors(embed(http, input="capital of france", dimensions=1, encoding_format="float"))
        assert short.tolist() == [1.0]  # the scripted vector's first value, normalised
        assert error_of(embed(http, input=["fine", "explode"]), 429)["code"] == "rate_limit_exceeded"
        chat = http.post(
            "/v1/chat/completions", json={"model": "gpt-5.6-sol", "messages": [{"role": "user", "content": "capital?"}]}
        )
        assert chat.json()["choices"][0]["message"]["content"] == "a chat reply, passed over by embeddings"
    assert scripted.requests[0].script == {"index": 0, "name": "pinned", "step": None}
