"""The ``input`` of an embeddings request, in its four forms, within the live API's limits.

- a string; an array of strings; an array of token ids; an array of arrays of token ids;
- at most :data:`MAX_INPUTS` inputs, none empty (the live API refuses an empty string);
- at most :data:`MAX_INPUT_TOKENS` tokens per input, and :data:`MAX_REQUEST_TOKENS` in all,
  counted with cl100k_base (:mod:`mockserver.engine.cl100k`); a token array counts its length.

Each refusal is a 400 in the live API's words: ``'$.input' is invalid...`` for a malformed input
(a wrong type, an empty string or array, more than 2,048 inputs, a token id outside the
vocabulary), ``Invalid 'input': maximum context length is 8192 tokens.`` for a long input, and
``Requested N tokens, max 300000 tokens per request`` (type and code ``max_tokens_per_request``).

Counting is bounded: an input is counted no further than just past 8,192 tokens, so a request
costs at most the counting of its 2,048 inputs' first 8,192 tokens, whatever the body holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mockserver import errors
from mockserver.engine import cl100k

MAX_INPUTS = 2_048
MAX_INPUT_TOKENS = 8_192
MAX_REQUEST_TOKENS = 300_000
API_REFERENCE_URL = "https://platform.openai.com/docs/api-reference"


@dataclass(frozen=True)
class EmbeddingInput:
    """One input: its text (a token array's decoded text) and its tokens."""

    text: str
    tokens: int


def read_inputs(value: Any) -> list[EmbeddingInput]:
    """The inputs of ``input``, or the live 400 that refuses it."""
    if isinstance(value, str):
        inputs = [_text_input(value)]
    elif isinstance(value, list) and value and len(value) <= MAX_INPUTS and all(isinstance(v, str) for v in value):
        inputs = [_text_input(v) for v in value]
    elif isinstance(value, list) and value and all(cl100k.valid_token(v) for v in value):
        inputs = [_token_input(value)]
    elif isinstance(value, list) and value and len(value) <= MAX_INPUTS and all(_token_array(v) for v in value):
        inputs = [_token_input(v) for v in value]
    else:
        raise invalid_input()
    total = sum(i.tokens for i in inputs)
    if total > MAX_REQUEST_TOKENS:
        raise too_many_tokens(total)
    return inputs


def _token_array(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(cl100k.valid_token(v) for v in value)


def _text_input(text: str) -> EmbeddingInput:
    if not text:
        raise invalid_input()
    tokens = cl100k.count_up_to(text, MAX_INPUT_TOKENS)
    if tokens > MAX_INPUT_TOKENS:
        raise input_too_long()
    return EmbeddingInput(text, tokens)


def _token_input(token_ids: list[int]) -> EmbeddingInput:
    if len(token_ids) > MAX_INPUT_TOKENS:
        raise input_too_long()
    return EmbeddingInput(cl100k.decode(token_ids), len(token_ids))


def invalid_input() -> errors.InvalidRequestError:
    return errors.InvalidRequestError(f"'$.input' is invalid. Please check the API reference: {API_REFERENCE_URL}.")


def input_too_long() -> errors.InvalidRequestError:
    return errors.InvalidRequestError(f"Invalid 'input': maximum context length is {MAX_INPUT_TOKENS} tokens.")


def too_many_tokens(requested: int) -> errors.InvalidRequestError:
    return errors.InvalidRequestError(
        f"Requested {requested} tokens, max {MAX_REQUEST_TOKENS} tokens per request",
        type="max_tokens_per_request",
        code="max_tokens_per_request",
    )
