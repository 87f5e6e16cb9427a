"""Reading ``input`` costs at most about one request's worth of counting, whatever the body holds."""

from __future__ import annotations

import pytest

from mockserver import errors
from mockserver.api.openai.embeddings import inputs
from mockserver.engine import cl100k


def test_counting_stops_once_the_request_is_past_its_token_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    text = " ".join(f"w{i}" for i in range(3_000))  # 8,000 tokens; 2,048 of them, 16 million
    per_input = cl100k.count(text)
    assert per_input <= inputs.MAX_INPUT_TOKENS
    counted: list[str] = []
    real = cl100k.count_up_to

    def counting(value: str, limit: int) -> int:
        counted.append(value)
        return real(value, limit)

    monkeypatch.setattr(cl100k, "count_up_to", counting)
    with pytest.raises(errors.InvalidRequestError) as refused:
        inputs.read_inputs([text] * 2_048)
    assert len(counted) == inputs.MAX_REQUEST_TOKENS // per_input + 1  # not 2,048
    requested = int(refused.value.message.split()[1])  # the rest is estimated at the rate counted so far
    assert requested == 2_048 * per_input
    assert refused.value.code == "max_tokens_per_request"


def test_token_arrays_are_measured_before_any_is_read_back(monkeypatch: pytest.MonkeyPatch) -> None:
    decoded: list[int] = []
    monkeypatch.setattr(cl100k, "decode", lambda ids: decoded.append(len(ids)) or "x")
    with pytest.raises(errors.InvalidRequestError, match="Requested 304000 tokens"):
        inputs.read_inputs([[1] * 8_000] * 38)
    with pytest.raises(errors.InvalidRequestError, match="maximum context length is 8192"):
        inputs.read_inputs([[1], [1] * 8_193])
    assert decoded == []


def test_an_empty_text_anywhere_is_refused_before_counting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cl100k, "count_up_to", lambda value, limit: pytest.fail("counted"))
    with pytest.raises(errors.InvalidRequestError, match=r"'\$.input' is invalid"):
        inputs.read_inputs(["a long text"] * 2_000 + [""])
