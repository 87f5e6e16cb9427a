"""What the SDK-driven suites share: tiktoken's cache, filled offline from mockserver's vocabularies."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from mockserver.testing.tiktoken_cache import seed_tiktoken_cache


@pytest.fixture(scope="session")
def tiktoken_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A tiktoken cache holding cl100k_base and o200k_base, in force for the session (nothing is downloaded)."""
    before = os.environ.get("TIKTOKEN_CACHE_DIR")
    directory = seed_tiktoken_cache(tmp_path_factory.mktemp("tiktoken"))
    yield directory
    if before is None:
        os.environ.pop("TIKTOKEN_CACHE_DIR", None)
    else:
        os.environ["TIKTOKEN_CACHE_DIR"] = before
