"""A Responses conversation continued with ``previous_response_id`` is held to the context window whole,
through the official SDK: the live 400 at the turn that passes it, nothing charged for it, and
``truncation="auto"`` dropping the oldest items instead (streamed or not), as ``input_tokens`` counts."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from mockserver import MockServer
from mockserver.config.fixture import load_fixture
from tests.support import INSTANT, fixture, sdk

KEY = "sk-mock-preview"
MODEL = "gpt-5.6-sol"
WINDOW = 600
MAX_OUTPUT = 40
TURN = "Tell me more about the harbour." + " hello" * 40  # about 50 tokens a turn


def small_window(**changes: Any) -> Any:
    data = load_fixture().model_dump()
    for model in data["models"]:
        model["context_window"] = WINDOW
    return fixture(models=data["models"], **changes)


@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    with MockServer(time_scale=0, fixture=small_window()) as running:
        yield running


def totals(server: MockServer) -> dict[str, Any]:
    return dict(httpx.get(f"{server.url}/_mock/usage", timeout=30).json()["totals"])


def grow_until_refused(client: openai.OpenAI, turn: str = TURN) -> tuple[list[Any], openai.BadRequestError]:
    """Continue one conversation turn by turn until a turn is refused; the served turns and the refusal."""
    served: list[Any] = []
    previous: str | None = None
    for _ in range(40):
        try:
            response = client.responses.create(
                model=MODEL, input=turn, previous_response_id=previous, max_output_tokens=MAX_OUTPUT
            )
        except openai.BadRequestError as refused:
            return served, refused
        served.append(response)
        previous = response.id
    raise AssertionError("the conversation never passed the window")


def test_a_growing_chain_is_refused_at_the_turn_that_passes_the_window(server: MockServer) -> None:
    with sdk(server, KEY) as client:
        served, refused = grow_until_refused(client)
        assert len(served) >= 3  # the earlier turns count: a single turn is far inside the window
        assert (refused.status_code, refused.type, refused.param, refused.code) == (
            400, "invalid_request_error", "input", "context_length_exceeded")  # fmt: skip
        body: Any = refused.body
        assert body["message"] == (
            "Your input exceeds the context window of this model. Please adjust your input and try again."
        )
        for response in served:
            assert response.usage is not None and response.usage.input_tokens + MAX_OUTPUT <= WINDOW
        last = served[-1]
        assert last.usage is not None and last.usage.input_tokens > len(served) * 40  # every turn counted
        # The refused turn's prompt, as the count endpoint (and usage) count it, passes the window.
        would = client.responses.input_tokens.count(model=MODEL, input=TURN, previous_response_id=last.id)
        assert would.input_tokens + MAX_OUTPUT > WINDOW
        assert (
            client.responses.input_tokens.count(
                model=MODEL, input=TURN, previous_response_id=served[-2].id
            ).input_tokens
            == last.usage.input_tokens
        )


def test_a_refused_turn_charges_no_rate_window_and_no_ledger() -> None:
    # 5 requests a minute: the window gives one back every 12 s, so its count is exact here. On the real
    # clock (time scale 1; replies made instant), so that the rate windows keep what they charge.
    key = {"key": "sk-window", "organization": "org-window", "rate_limits": {"rpm": 5, "tpm": 100_000}}
    long_turn = TURN + " hello" * 130  # about 180 tokens: the third turn passes the window
    with (
        MockServer(time_scale=1, fixture=small_window(keys=[key])) as server,
        sdk(server, "sk-window", default_headers=INSTANT) as client,
    ):
        served, _ = grow_until_refused(client, long_turn)
        assert len(served) == 2
        before = totals(server)
        first = client.responses.with_raw_response.create(model=MODEL, input="hi", max_output_tokens=MAX_OUTPUT)
        with pytest.raises(openai.BadRequestError):
            client.responses.create(
                model=MODEL, input=long_turn, previous_response_id=served[-1].id, max_output_tokens=MAX_OUTPUT
            )
        second = client.responses.with_raw_response.create(model=MODEL, input="hi", max_output_tokens=MAX_OUTPUT)
        after = totals(server)
    assert after["requests"] == before["requests"] + 2  # the two served, not the refused one
    # Two refused turns and four served: the window counts the four only.
    remaining = [int(raw.headers["x-ratelimit-remaining-requests"]) for raw in (first, second)]
    assert remaining == [2, 1]
    spent = int(first.headers["x-ratelimit-remaining-tokens"]) - int(second.headers["x-ratelimit-remaining-tokens"])
    assert spent < 200  # at most the second "hi" (the window refills meanwhile), not the refused turn's 550+


def test_truncation_auto_drops_the_oldest_items_streamed_or_not(server: MockServer) -> None:
    with sdk(server, KEY) as client:
        served, _ = grow_until_refused(client)
        last = served[-1].id
        response = client.responses.create(
            model=MODEL, input=TURN, previous_response_id=last, max_output_tokens=MAX_OUTPUT, truncation="auto"
        )
        assert response.truncation == "auto"
        assert response.usage is not None
        kept = response.usage.input_tokens
        assert 0 < kept <= WINDOW - MAX_OUTPUT
        whole = client.responses.input_tokens.count(model=MODEL, input=TURN, previous_response_id=last).input_tokens
        assert whole + MAX_OUTPUT > WINDOW and kept < whole  # items were dropped
        with client.responses.stream(
            model=MODEL, input=TURN, previous_response_id=last, max_output_tokens=MAX_OUTPUT, truncation="auto"
        ) as stream:
            events = list(stream)
        # A reply cut by max_output_tokens ends "response.incomplete"; either way it carries the response.
        assert events[-1].type in ("response.completed", "response.incomplete")
        final = events[-1].response
        assert final.truncation == "auto" and final.usage is not None
        assert final.usage.input_tokens == kept
        # The truncated response continues the chain: the next turn is fitted again.
        after = client.responses.create(
            model=MODEL, input=TURN, previous_response_id=response.id, max_output_tokens=MAX_OUTPUT, truncation="auto"
        )
        assert after.usage is not None and after.usage.input_tokens <= WINDOW - MAX_OUTPUT


def test_input_tokens_count_agrees_with_a_truncated_usage(server: MockServer) -> None:
    with sdk(server, KEY) as client:
        served, _ = grow_until_refused(client)
        previous = served[-1].id
        for _ in range(3):  # without an output limit, the prompt alone fills the window
            response = client.responses.create(
                model=MODEL, input=TURN, previous_response_id=previous, truncation="auto"
            )
            counted = client.responses.input_tokens.count(
                model=MODEL, input=TURN, previous_response_id=previous, truncation="auto"
            )
            assert response.usage is not None and counted.input_tokens == response.usage.input_tokens <= WINDOW
            previous = response.id


def test_truncation_auto_still_refuses_a_last_message_past_the_window(server: MockServer) -> None:
    with sdk(server, KEY) as client:
        for stream in (False, True):
            with pytest.raises(openai.BadRequestError) as caught:
                client.responses.create(model=MODEL, input=" hello" * 2 * WINDOW, truncation="auto", stream=stream)
            assert (caught.value.param, caught.value.code) == ("input", "context_length_exceeded")
