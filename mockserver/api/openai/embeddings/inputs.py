"""The ``input`` of an embeddings request, in its four forms, within the live API's limits.

- a string; an array of strings; an array of token ids; an array of arrays of token ids;
- at most :data:`MAX_INPUTS` inputs, none empty (the live API refuses an empty string);
- at most :data:`MAX_INPUT_TOKENS` tokens per input, and :data:`MAX_REQUEST_TOKENS` in all,
  counted with cl100k_base (:mod:`mockserver.engine.cl100k`); a token array counts its length.

Each refusal is a 400 in the live API's words: ``'$.input' is invalid...`` for a malformed input
(a wrong type, an empty string or array, more than 2,048 inputs, a token id outside the
vocabulary), ``Invalid 'input': maximum context length is 8192 tokens.`` for a long input, and
``Requested N tokens, max 300000 tokens per request`` (type and code ``max_tokens_per_request``).

Counting is bounded: an input is counted no further than just past 8,192 tokens, and the inputs
no further than just past 300,000 tokens in all, so a request costs at most the counting of about
300,000 tokens, whatever the body holds. Past that the request is refused, and the ``N`` of its
message is the tokens counted so far plus the rest estimated at the rate counted so far (as a chat
prompt past its context window is). Token arrays are measured by their lengths before any is read
back into text.
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
        return _text_inputs([value])
    if isinstance(value, list) and value and len(value) <= MAX_INPUTS and all(isinstance(v, str) for v in value):
        return _text_inputs(value)
    if isinstance(value, list) and value and all(cl100k.valid_token(v) for v in value):
        return _token_inputs([value])
    if isinstance(value, list) and value and len(value) <= MAX_INPUTS and all(_token_array(v) for v in value):
        return _token_inputs(value)
    raise invalid_input()


def _text_inputs(texts: list[str]) -> list[EmbeddingInput]:
    if not all(texts):
        raise invalid_input()
    inputs: list[EmbeddingInput] = []
    total = chars = 0
    for text in texts:
        item = _text_input(text)
        inputs.append(item)
        total += item.tokens
        chars += len(text)
        if total > MAX_REQUEST_TOKENS:  # refused whatever the rest holds: estimate it rather than count it
            rest = sum(len(other) for other in texts[len(inputs) :])
            raise too_many_tokens(total + round(rest * total / chars))
    return inputs


def _token_inputs(arrays: list[list[int]]) -> list[EmbeddingInput]:
    if any(len(array) > MAX_INPUT_TOKENS for array in arrays):
        raise input_too_long()
    total = sum(len(array) for array in arrays)
    if total > MAX_REQUEST_TOKENS:
        raise too_many_tokens(total)
    return [EmbeddingInput(cl100k.decode(array), len(array)) for array in arrays]


def _token_array(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(cl100k.valid_token(v) for v in value)


def _text_input(text: str) -> EmbeddingInput:
    tokens = cl100k.count_up_to(text, MAX_INPUT_TOKENS)
    if tokens > MAX_INPUT_TOKENS:
        raise input_too_long()
    return EmbeddingInput(text, tokens)


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
