"""An output limit the model cannot write at all is refused for that, not as a prompt past the window."""

from __future__ import annotations

import openai
import pytest

from mockserver import MockServer


def test_max_tokens_past_the_models_output_is_too_large_not_past_the_window(server: MockServer) -> None:
    client = openai.OpenAI(
        base_url=f"{server.url}/v1", api_key="sk-mock-preview", max_retries=0, _strict_response_validation=True
    )
    huge = 10**12  # with the prompt, also past the 400,000-token window: the output check speaks first, as live
    with pytest.raises(openai.BadRequestError) as chat:
        client.chat.completions.create(
            model="gpt-5.6-sol", max_tokens=huge, messages=[{"role": "user", "content": "hi"}]
        )
    assert (chat.value.param, chat.value.code) == ("max_tokens", "invalid_value")
    assert f"max_tokens is too large: {huge}." in chat.value.message
    with pytest.raises(openai.BadRequestError) as responses:
        client.responses.create(model="gpt-5.6-sol", max_output_tokens=huge, input="hi")
    assert (responses.value.param, responses.value.code) == ("max_output_tokens", "invalid_value")
