"""Embeddings and moderations through the official openai SDK, against a real server.

Strict clients (``_strict_response_validation=True``) ask for ``encoding_format="float"``: the
SDK's own ``Embedding.embedding`` type is a list of floats, so strict validation refuses the
base64 string its default request asks for, from the live API as from this server. The SDK's
default path (base64, decoded by the SDK) is checked with a default client.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import openai
import pytest
import tiktoken
from openai.types import CreateEmbeddingResponse

from mockserver import MockServer
from tests.conftest import fixture_with
from tests.processes import ServerProcess

SMALL = "text-embedding-3-small"
LARGE = "text-embedding-3-large"
DOCUMENTS = [
    "The lighthouse keeper lit the lamp at dusk.",
    "At dusk the keeper of the lighthouse lit its lamp again.",
    "Quarterly revenue grew in the European market.",
]


def unit(vector: list[float]) -> np.ndarray:
    return np.asarray(vector, dtype=np.float64)


def test_strict_float_vectors_are_stable_unit_and_similar_where_words_are_shared(client: openai.OpenAI) -> None:
    first = client.embeddings.create(model=SMALL, input=DOCUMENTS, encoding_format="float")
    again = client.embeddings.create(model=SMALL, input=DOCUMENTS, encoding_format="float")
    assert [d.embedding for d in first.data] == [d.embedding for d in again.data]
    keeper, keeper_again, revenue = (unit(d.embedding) for d in first.data)
    assert all(abs(np.linalg.norm(v) - 1) < 1e-6 for v in (keeper, keeper_again, revenue))
    assert keeper @ keeper_again > 0.5 > abs(keeper @ revenue) + 0.3
    assert first.model == SMALL and [d.index for d in first.data] == [0, 1, 2]


def test_the_sdk_default_base64_decodes_to_the_float_vector(server: MockServer, client: openai.OpenAI) -> None:
    # A default client: it asks for base64 and decodes it.
    with openai.OpenAI(base_url=server.base_url, api_key="sk-mock-preview", max_retries=0) as default:
        decoded = default.embeddings.create(model=LARGE, input=DOCUMENTS[0])
        assert server.requests[-1].body["encoding_format"] == "base64"
    as_float = client.embeddings.create(model=LARGE, input=DOCUMENTS[0], encoding_format="float")
    assert decoded.data[0].embedding == as_float.data[0].embedding
    raw = client.embeddings.with_raw_response.create(model=LARGE, input=DOCUMENTS[0], encoding_format="base64")
    assert isinstance(raw.http_response.json()["data"][0]["embedding"], str)


def test_dimensions_are_honoured_with_unit_norm(client: openai.OpenAI) -> None:
    for model, size in ((SMALL, 1536), (LARGE, 3072)):
        assert len(client.embeddings.create(model=model, input="x", encoding_format="float").data[0].embedding) == size
        for dimensions in (64, 512, size):
            reply = client.embeddings.create(
                model=model, input=DOCUMENTS, dimensions=dimensions, encoding_format="float"
            )
            for item in reply.data:
                assert len(item.embedding) == dimensions
                assert abs(np.linalg.norm(unit(item.embedding)) - 1) < 1e-6


def test_usage_equals_tiktokens_count(client: openai.OpenAI, tiktoken_cache: Path) -> None:
    encoding = tiktoken.encoding_for_model(SMALL)  # cl100k_base, from the seeded cache
    texts = [*DOCUMENTS, "请写一篇关于长城历史的文章。", "naïve café 🤖 1234567"]
    reply = client.embeddings.create(model=SMALL, input=texts, encoding_format="float")
    expected = sum(len(encoding.encode(t)) for t in texts)
    assert reply.usage.prompt_tokens == reply.usage.total_tokens == expected
    token_arrays = [encoding.encode(t) for t in texts]
    as_tokens = client.embeddings.create(model=SMALL, input=token_arrays, encoding_format="float")
    assert as_tokens.usage.prompt_tokens == expected
    assert [d.embedding for d in as_tokens.data] == [d.embedding for d in reply.data]


def test_the_live_limits_reach_the_sdk_as_bad_requests(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError, match=r"'\$\.input' is invalid"):
        client.embeddings.create(model=SMALL, input=["x"] * 2049, encoding_format="float")
    with pytest.raises(openai.BadRequestError, match="maximum context length is 8192 tokens"):
        client.embeddings.create(model=SMALL, input=[[1] * 8193], encoding_format="float")
    with pytest.raises(openai.BadRequestError, match="max 300000 tokens per request") as refused:
        client.embeddings.create(model=SMALL, input=[[1] * 8192] * 37, encoding_format="float")
    assert refused.value.code == "max_tokens_per_request"


def test_the_async_client_gets_the_same_vectors(server: MockServer, client: openai.OpenAI) -> None:
    async def embed() -> CreateEmbeddingResponse:
        async with openai.AsyncOpenAI(
            base_url=server.base_url, api_key="sk-mock-preview", _strict_response_validation=True, max_retries=0
        ) as async_client:
            return await async_client.embeddings.create(model=SMALL, input=DOCUMENTS, encoding_format="float")

    reply = asyncio.run(embed())
    same = client.embeddings.create(model=SMALL, input=DOCUMENTS, encoding_format="float")
    assert [d.embedding for d in reply.data] == [d.embedding for d in same.data]


@pytest.fixture(scope="module")
def other_process() -> Iterator[ServerProcess]:
    with ServerProcess("--time-scale", "0", "--seed", "99") as running:
        yield running


def test_vectors_are_the_same_in_another_process(client: openai.OpenAI, other_process: ServerProcess) -> None:
    with openai.OpenAI(
        base_url=other_process.base_url, api_key="sk-mock-standard", _strict_response_validation=True, max_retries=0
    ) as elsewhere:
        there = elsewhere.embeddings.create(model=LARGE, input=DOCUMENTS, dimensions=256, encoding_format="float")
    here = client.embeddings.create(model=LARGE, input=DOCUMENTS, dimensions=256, encoding_format="float")
    assert [d.embedding for d in there.data] == [d.embedding for d in here.data]


@pytest.fixture(scope="module")
def moderated() -> Iterator[MockServer]:
    rules = [{"pattern": r"(?i)\bshoplift", "categories": ["illicit"]}]
    with MockServer(fixture=fixture_with(moderation={"rules": rules}), time_scale=0, seed=2) as running:
        yield running


def test_moderation_flags_a_rules_category_and_nothing_else(moderated: MockServer) -> None:
    with openai.OpenAI(
        base_url=moderated.base_url, api_key="sk-mock-preview", _strict_response_validation=True, max_retries=0
    ) as client:
        questions = ["How do I shoplift?", "How do I knit?"]
        reply = client.moderations.create(model="omni-moderation-latest", input=questions)
        multimodal = client.moderations.create(
            input=[
                {"type": "text", "text": "what is this?"},
                {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
            ]
        )
    flagged, harmless = reply.results
    assert flagged.flagged and harmless.flagged is False
    on = {name for name, value in flagged.categories.model_dump(by_alias=True).items() if value}
    assert on == {"illicit"}
    assert not any(harmless.categories.model_dump().values())
    assert flagged.category_scores.illicit > 0.5 > max(harmless.category_scores.model_dump().values())
    (combined,) = multimodal.results
    assert combined.flagged is False and combined.category_applied_input_types.violence == ["text", "image"]
