"""OpenAI's ``o200k_base`` and ``cl100k_base`` vocabularies, shipped with mockserver, read offline.

tiktoken downloads each vocabulary on first use (a ``.tiktoken`` file: one base64 token and its
rank a line). mockserver ships the same vocabularies in this package instead, packed more tightly:
a ``<name>.ranks.gz`` file holds, gzipped, the number of tokens (4 bytes, little-endian), each
token's length in bytes (one byte each, in rank order), then every token's bytes one after another.
Reading one takes a fifth of the time parsing the ``.tiktoken`` text does (no base64), and
:func:`tiktoken_file` gives back the very file tiktoken downloads: its SHA-256 is the one tiktoken
pins (``tests/engine/test_vocabularies.py`` checks it). ``scripts/pack_vocabularies.py`` writes the
packed files from the downloaded ones.

Each encoding's pre-tokenizer pattern and special tokens are tiktoken's own
(``tiktoken_ext/openai_public.py``): with them and the ranks, ``tiktoken.Encoding`` is the encoding
``tiktoken.get_encoding(name)`` gives, built without the network.
"""

from __future__ import annotations

import base64
import gzip
import itertools
from dataclasses import dataclass
from importlib import resources


@dataclass(frozen=True)
class Vocabulary:
    """What tiktoken needs besides the ranks, and where tiktoken would download the file."""

    url: str
    sha256: str  # of the .tiktoken file at ``url``, as tiktoken pins it
    pattern: str
    special_tokens: dict[str, int]


VOCABULARIES = {
    "o200k_base": Vocabulary(
        url="https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        pattern="|".join(
            [
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""\p{N}{1,3}""",
                r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
                r"""\s*[\r\n]+""",
                r"""\s+(?!\S)""",
                r"""\s+""",
            ]
        ),
        special_tokens={"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    ),
    "cl100k_base": Vocabulary(
        url="https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        pattern=(
            r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
            r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
        ),
        special_tokens={
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
}

_COUNT_BYTES = 4


def ranks(name: str) -> dict[bytes, int]:
    """The ``name`` vocabulary: each token's bytes and its rank (its id), as tiktoken reads them."""
    packed = gzip.decompress((resources.files(__name__) / f"{name}.ranks.gz").read_bytes())
    count = int.from_bytes(packed[:_COUNT_BYTES], "little")
    lengths = packed[_COUNT_BYTES : _COUNT_BYTES + count]
    body = memoryview(packed)[_COUNT_BYTES + count :]
    ends = itertools.accumulate(lengths)
    starts = itertools.accumulate(lengths, initial=0)
    return {bytes(body[start:end]): rank for rank, (start, end) in enumerate(zip(starts, ends, strict=False))}


def pack(ranks_of: dict[bytes, int]) -> bytes:
    """``ranks_of`` packed as :func:`ranks` reads it (ranks must be 0 to n-1, tokens at most 255 bytes)."""
    ordered = sorted(ranks_of, key=ranks_of.__getitem__)
    if [ranks_of[token] for token in ordered] != list(range(len(ordered))):
        raise ValueError("the ranks are not 0 to n-1")
    header = len(ordered).to_bytes(_COUNT_BYTES, "little") + bytes(len(token) for token in ordered)
    return gzip.compress(header + b"".join(ordered), compresslevel=9, mtime=0)


def tiktoken_file(name: str) -> bytes:
    """The ``.tiktoken`` file tiktoken downloads for ``name``, rebuilt from the shipped vocabulary."""
    ordered = sorted((rank, token) for token, rank in ranks(name).items())
    return b"".join(base64.b64encode(token) + b" %d\n" % rank for rank, token in ordered)


def parse_tiktoken_file(data: bytes) -> dict[bytes, int]:
    """A ``.tiktoken`` file's ranks, as tiktoken's ``load_tiktoken_bpe`` reads them."""
    return {base64.b64decode(token): int(rank) for token, rank in (line.split() for line in data.splitlines() if line)}
