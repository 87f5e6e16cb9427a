"""LangChain's ``OpenAIEmbeddings`` and LlamaIndex's ``OpenAIEmbedding`` against a real server.

Both count tokens with tiktoken before they send; tiktoken's cache is filled from mockserver's
vocabularies (``tiktoken_cache``), so nothing is downloaded. LangChain sends token arrays (its
``check_embedding_ctx_length``), which the server reads back into the same text: its vectors equal
those of LlamaIndex and the SDK, which send strings.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import openai
import pytest
import tiktoken
from langchain_openai import OpenAIEmbeddings
from llama_index.embeddings.openai import OpenAIEmbedding

from mockserver import MockServer

SMALL = "text-embedding-3-small"
LARGE = "text-embedding-3-large"
KEY = "sk-mock-preview"
DOCUMENTS = [
    "Paris is the capital of France.",
    "The capital of France is Paris, on the Seine.",
    "Photosynthesis turns light into chemical energy.",
]
QUERY = "What is the capital of France?"


@pytest.fixture(scope="module")
def embedding_server() -> Iterator[MockServer]:
    with MockServer(time_scale=0, seed=4) as running:
        yield running


def cosine(a: list[float], b: list[float]) -> float:
    return float(np.dot(np.asarray(a), np.asarray(b)))


def check_retrieval(documents: list[list[float]], query: list[float]) -> None:
    """Unit vectors; the query is nearer both documents about Paris than the unrelated one."""
    for vector in [*documents, query]:
        assert abs(np.linalg.norm(vector) - 1) < 1e-6
    paris, paris_again, leaves = (cosine(query, d) for d in documents)
    assert min(paris, paris_again) > max(leaves, 0.0) + 0.2


def sent_tokens(server: MockServer) -> int:
    return sum(call.usage["input_tokens"] for call in server.requests if call.path == "/v1/embeddings")


def expected_tokens(*texts: str) -> int:
    encoding = tiktoken.encoding_for_model(SMALL)
    return sum(len(encoding.encode(t)) for t in texts)


def sdk_vectors(server: MockServer, texts: list[str], **options: Any) -> list[list[float]]:
    with openai.OpenAI(base_url=server.base_url, api_key=KEY, _strict_response_validation=True) as client:
        reply = client.embeddings.create(model=SMALL, input=texts, encoding_format="float", **options)
    return [d.embedding for d in reply.data]


def test_langchain_openai_embeddings(embedding_server: MockServer, tiktoken_cache: Path) -> None:
    embedding_server.reset()
    embedder = OpenAIEmbeddings(model=SMALL, base_url=embedding_server.base_url, api_key=KEY)  # type: ignore[arg-type]
    documents = embedder.embed_documents(DOCUMENTS)
    query = embedder.embed_query(QUERY)
    check_retrieval(documents, query)
    assert embedder.embed_documents(DOCUMENTS) == documents  # the same vectors on every call
    assert all(isinstance(call.body["input"][0], list) for call in embedding_server.requests)  # token arrays
    assert sent_tokens(embedding_server) == 2 * expected_tokens(*DOCUMENTS) + expected_tokens(QUERY)
    assert np.allclose(documents, sdk_vectors(embedding_server, DOCUMENTS), atol=1e-7)

    shortened = OpenAIEmbeddings(
        model=LARGE,
        base_url=embedding_server.base_url,
        api_key=KEY,  # type: ignore[arg-type]
        dimensions=256,
    ).embed_documents(DOCUMENTS)
    assert [len(v) for v in shortened] == [256] * 3 and all(abs(np.linalg.norm(v) - 1) < 1e-6 for v in shortened)


def test_langchain_without_its_token_check_sends_strings(embedding_server: MockServer) -> None:
    embedding_server.reset()
    embedder = OpenAIEmbeddings(
        model=SMALL,
        base_url=embedding_server.base_url,
        api_key=KEY,  # type: ignore[arg-type]
        check_embedding_ctx_length=False,  # no tiktoken at all
    )
    documents = embedder.embed_documents(DOCUMENTS)
    assert embedding_server.requests[0].body["input"] == DOCUMENTS
    assert np.allclose(documents, sdk_vectors(embedding_server, DOCUMENTS), atol=1e-7)


def test_llama_index_openai_embedding(embedding_server: MockServer, tiktoken_cache: Path) -> None:
    embedding_server.reset()
    embedder = OpenAIEmbedding(model=SMALL, api_base=embedding_server.base_url, api_key=KEY)
    documents = embedder.get_text_embedding_batch(DOCUMENTS)
    query = embedder.get_query_embedding(QUERY)
    check_retrieval(documents, query)
    assert embedder.get_text_embedding_batch(DOCUMENTS) == documents
    assert sent_tokens(embedding_server) == 2 * expected_tokens(*DOCUMENTS) + expected_tokens(QUERY)
    assert np.allclose(documents, sdk_vectors(embedding_server, DOCUMENTS), atol=1e-7)

    shortened = OpenAIEmbedding(
        model=LARGE, api_base=embedding_server.base_url, api_key=KEY, dimensions=512
    ).get_text_embedding_batch(DOCUMENTS)
    assert [len(v) for v in shortened] == [512] * 3 and all(abs(np.linalg.norm(v) - 1) < 1e-6 for v in shortened)
