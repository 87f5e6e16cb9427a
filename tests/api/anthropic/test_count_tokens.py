"""``count_tokens`` counts a long prompt in pieces, so the event loop keeps serving meanwhile."""

from __future__ import annotations

from mockserver.api.anthropic import messages
from mockserver.api.anthropic.schemas import CountTokensRequest
from mockserver.engine import prompt_count
from tests.support import with_loop_turns


def test_a_long_prompt_is_counted_exactly_with_the_loop_served_between_pieces() -> None:
    text = " ".join(f"word{i}" for i in range(40_000))  # 330,000 characters: about twenty pieces
    assert len(text) > 10 * prompt_count.PIECE_CHARS
    body = CountTokensRequest.model_validate(
        {"model": "claude-fable-5", "system": "Be brief.", "messages": [{"role": "user", "content": text}]}
    )

    counted, ticks = with_loop_turns(lambda: messages.counted_input_tokens(body))
    assert counted == messages.input_tokens(body)  # the same count as the usage of a reply
    assert ticks >= 10  # the other task ran between the pieces (counting it at once gives it none)
