"""``logprobs`` of a message's ``output_text``, when the request's ``include`` asks for
``message.output_text.logprobs``: one entry per token of the text, each with the token, its UTF-8
``bytes``, a log probability and the ``top_logprobs`` alternatives the request's ``top_logprobs``
asks for (none by default). The values are made up but fixed: the same token always gets the same.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any

INCLUDE = "message.output_text.logprobs"
_ALTERNATIVES = (" the", " a", ",", ".", " and", " to", " of", " in", " is", " it")  # runners-up, in order


def entries(tokens: Sequence[str], top: int) -> list[dict[str, Any]]:
    """The ``logprobs`` entries of ``tokens``, each with ``top`` alternatives (the token itself first)."""
    return [_entry(token, top) for token in tokens]


def _entry(token: str, top: int) -> dict[str, Any]:
    logprob = _logprob(token)
    runners = [t for t in _ALTERNATIVES if t != token][: max(0, top - 1)]
    alternatives = [_alternative(token, logprob)] if top > 0 else []
    alternatives += [_alternative(t, logprob - 2.0 - i) for i, t in enumerate(runners)]
    return {**_alternative(token, logprob), "top_logprobs": alternatives}


def _alternative(token: str, logprob: float) -> dict[str, Any]:
    return {"token": token, "bytes": list(token.encode()), "logprob": logprob}


def _logprob(token: str) -> float:
    """A log probability near 0 (the chosen token is the likely one), the same for the same token."""
    return -(zlib.crc32(token.encode()) % 10_000) / 20_000
