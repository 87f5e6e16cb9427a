"""The vocabularies mockserver ships are the files tiktoken downloads, packed, and read back exactly."""

from __future__ import annotations

import hashlib

import pytest

from mockserver.engine import vocabularies


@pytest.mark.parametrize("name", sorted(vocabularies.VOCABULARIES))
def test_a_packed_vocabulary_is_the_file_tiktoken_pins(name: str) -> None:
    data = vocabularies.tiktoken_file(name)
    assert hashlib.sha256(data).hexdigest() == vocabularies.VOCABULARIES[name].sha256
    assert vocabularies.parse_tiktoken_file(data) == vocabularies.ranks(name)


def test_packing_is_in_rank_order_and_refuses_ranks_with_gaps() -> None:
    ranks = {b"a": 0, b"b": 1, b"ab": 2, bytes(range(255)): 3}
    assert vocabularies.pack(ranks) == vocabularies.pack(dict(reversed(ranks.items())))  # in rank order, always
    with pytest.raises(ValueError, match="0 to n-1"):
        vocabularies.pack({b"a": 0, b"b": 2})
