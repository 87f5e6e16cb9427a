"""tiktoken reads the vocabularies seeded from mockserver's copies as its own, without a download."""

from __future__ import annotations

from pathlib import Path

import pytest
import tiktoken.load

from mockserver.testing import tiktoken_cache
from mockserver.testing.tiktoken_cache import TIKTOKEN_FILES, seed_tiktoken_cache


def refuse(*args: object, **kwargs: object) -> bytes:
    raise AssertionError("tiktoken tried to download a vocabulary")


@pytest.mark.parametrize("name", sorted(TIKTOKEN_FILES))
def test_tiktoken_loads_the_seeded_vocabulary_offline(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    assert seed_tiktoken_cache(tmp_path) == tmp_path
    assert tiktoken_cache.tiktoken_cache_dir() == tmp_path  # TIKTOKEN_CACHE_DIR now names it
    monkeypatch.setattr(tiktoken.load, "read_file", refuse)
    url, sha256 = TIKTOKEN_FILES[name]
    ranks = tiktoken.load.load_tiktoken_bpe(url, expected_hash=sha256)  # checks the SHA-256 itself
    assert len(ranks) > 100_000


def test_seeding_again_leaves_the_files_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    seed_tiktoken_cache()
    files = sorted(tmp_path.iterdir())
    stamps = [f.stat().st_mtime_ns for f in files]
    seed_tiktoken_cache()
    assert [f.stat().st_mtime_ns for f in sorted(tmp_path.iterdir())] == stamps and len(files) == 2


def test_a_vocabulary_that_is_not_tiktokens_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(TIKTOKEN_FILES, "cl100k_base", ("https://example.invalid/cl100k_base.tiktoken", "0" * 64))
    with pytest.raises(tiktoken_cache.VocabularyMismatch, match="SHA-256"):
        tiktoken_cache.vocabulary("cl100k_base")
