"""Embedding vectors that a retrieval test can rely on: deterministic, unit length, and closer
for texts that share words.

A text's vector is a weighted sum of one fixed pseudo-random direction per word it contains (its
words lowercased; every CJK character counts as a word), plus a small direction of the whole text,
normalised to length 1:

- a word's direction is the signed sum of :data:`PICKS` rows of a fixed table of :data:`ROWS`
  pseudo-random vectors, the rows and signs chosen by a hash (BLAKE2b) of the model id and the
  word; the table's values come from SHAKE-256 of a fixed name. Nothing depends on the process,
  the server's seed or the platform, so a vector can be stored and compared across runs;
- a word found ``n`` times weighs ``1 + log(n)``; a few very common English words (``the``,
  ``and``, ...) weigh :data:`COMMON_WORD_WEIGHT`, so sharing them makes two texts only a little
  closer;
- the whole text's own direction (weight :data:`TEXT_WEIGHT`) tells apart texts with the same
  words in another order, and gives a text with no words a vector too.

Random directions in hundreds of dimensions are nearly orthogonal (two words share a row of the
table about once in 250 pairs), so the cosine similarity of two texts is about the weight of the
words they share over the weight of all their words: near 0 for unrelated texts, higher the more
words they share, 1 for the same text.

``dimensions`` keeps the first ``d`` values and normalises again, as shortening a text-embedding-3
vector does; the first ``d`` values of every row do not depend on ``d``, so a shortened vector is
the full one cut and normalised (to float32 precision).

Cost: a hash per distinct word, then one matrix product of the texts' row weights with the table
(at most ``texts x ROWS x d`` multiply-adds: about 13 billion for 2,048 long texts at 3,072
dimensions). The table takes ``ROWS x d x 2`` bytes (12 MiB at 3,072 dimensions), made once per
process. The result is exact: the same bits for a text alone or among others, on any machine (see
:data:`WEIGHT_SCALE`). The API layer bounds a request (2,048 inputs, 300,000 tokens) and makes large ones away
from the event loop.
"""

from __future__ import annotations

import base64
import hashlib
import math
import re
import threading
from collections import Counter
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]

ROWS = 2_048
PICKS = 4
TEXT_WEIGHT = 0.25
COMMON_WORD_WEIGHT = 0.15
# The most frequent English function words: shared by nearly any two sentences, so they say little.
_COMMON = "a an and are as at be but by for from has have he her his i if in is it its of on or she so that the "
_COMMON += "their them they this to was we were what when which who will with you your"
COMMON_WORDS = frozenset(_COMMON.split(" "))
_TABLE_NAME = b"mockserver embeddings table v1"
_WORDS = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\u3040-\u30ff\uac00-\ud7af]|[^\W_]+")
_TEXT_FEATURE = "\x01text\x01"

# Weights are counted in 1/WEIGHT_SCALE units, as integers: with the table's integer values, every
# product and every partial sum of the matrix product is an integer below 2**53, so float64
# computes it exactly, whatever the order of the additions (the BLAS, the batch, the machine).
WEIGHT_SCALE = 4_096
_COLUMN_BLOCK = 512  # table columns widened to float64 at a time

_LOCK = threading.Lock()
_TABLE: list[npt.NDArray[np.int16]] = []  # the table, as wide as the widest vector asked for so far


def words(text: str) -> Counter[str]:
    """The words of ``text``, lowercased, with how often each occurs; each CJK character is a word."""
    return Counter(match.lower() for match in _WORDS.findall(text))


def table(dimensions: int) -> npt.NDArray[np.int16]:
    """The first ``dimensions`` columns of the table (row ``r`` is SHAKE-256 of its name and ``r``)."""
    with _LOCK:
        if not _TABLE or _TABLE[0].shape[1] < dimensions:
            rows = [
                hashlib.shake_256(_TABLE_NAME + r.to_bytes(4, "little")).digest(2 * dimensions) for r in range(ROWS)
            ]
            _TABLE[:] = [np.frombuffer(b"".join(rows), dtype="<i2").reshape(ROWS, dimensions).astype(np.int16)]
        return _TABLE[0][:, :dimensions]


def _digest(model: str, feature: str) -> bytes:
    """What picks the table rows of one word (or text) of one model, and their signs."""
    return hashlib.blake2b(f"{model}\x00{feature}".encode(), digest_size=4 * PICKS).digest()


def embed_many(model: str, texts: Sequence[str], dimensions: int) -> list[Vector]:
    """The unit-length vector of each of ``texts`` for ``model``, in ``dimensions`` dimensions."""
    if not texts:
        return []
    digests: list[bytes] = []
    weights: list[float] = []
    owners: list[int] = []
    for text in texts:
        counted = words(text)
        for word, times in counted.items():
            digests.append(_digest(model, word))
            weights.append((COMMON_WORD_WEIGHT if word in COMMON_WORDS else 1.0) * (1.0 + math.log(times)))
        digests.append(_digest(model, _TEXT_FEATURE + text))
        weights.append(TEXT_WEIGHT)
        owners.append(len(counted) + 1)
    picks = np.frombuffer(b"".join(digests), dtype="<u4").reshape(-1, PICKS)
    rows = (picks % ROWS).astype(np.int64)
    units = np.rint(np.asarray(weights, dtype=np.float64) * WEIGHT_SCALE)  # whole numbers, as float64
    signed = np.where(picks & 0x8000_0000, 1.0, -1.0) * units[:, None]
    text_of = np.repeat(np.arange(len(texts)), owners)[:, None]
    # Sums of whole numbers far below 2**53: exact in float64, in any order.
    row_weights = np.bincount((text_of * ROWS + rows).ravel(), signed.ravel(), minlength=len(texts) * ROWS)
    weights_by_row = row_weights.reshape(len(texts), ROWS)
    touched = np.flatnonzero(np.any(weights_by_row, axis=0))  # short texts touch a few rows of the table
    left = weights_by_row[:, touched]
    columns = table(dimensions)[touched]
    sums = np.empty((len(texts), dimensions), dtype=np.float64)
    for start in range(0, dimensions, _COLUMN_BLOCK):
        end = min(dimensions, start + _COLUMN_BLOCK)
        sums[:, start:end] = left @ columns[:, start:end].astype(np.float64)
    return [_unit(v) for v in sums]


def _unit(values: npt.NDArray[np.float64]) -> Vector:
    """``values`` over their length, as float32 (a zero vector stays zero)."""
    norm = float(np.sqrt(np.sum(values * values)))
    return (values / norm if norm > 0 else values).astype(np.float32)


def normalised(vector: Vector) -> Vector:
    """``vector`` scaled to length 1 (a zero vector stays zero)."""
    return _unit(vector.astype(np.float64))


def shortened(vector: Sequence[float] | Vector, dimensions: int | None) -> Vector:
    """The first ``dimensions`` values of ``vector``, normalised again; the vector itself with ``None``."""
    values = np.asarray(vector, dtype=np.float32)
    if dimensions is None or dimensions >= len(values):
        return values
    return normalised(values[:dimensions])


def as_base64(vector: Vector) -> str:
    """The vector as ``encoding_format: "base64"``: little-endian float32, base64-encoded."""
    return base64.b64encode(vector.astype("<f4").tobytes()).decode("ascii")
