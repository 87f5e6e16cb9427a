"""Chat Completions and models through the official SDK, with strict response validation."""

from __future__ import annotations

import httpx
import openai
import pytest

from mockserver import MockServer
from mockserver.config.fixture import Policies
from tests.conftest import fixture_with

MESSAGES = [{"role": "user", "content": "Write a haiku about speed."}]


def test_models_list_depends_on_preview_access(client: openai.OpenAI, standard_client: openai.OpenAI) -> None:
    preview_ids = [m.id for m in client.models.list()]
    standard_ids = [m.id for m in standard_client.models.list()]
    assert "gpt-5.6-sol-ultrafast" in preview_ids
    assert "gpt-5.6-sol-ultrafast" not in standard_ids
    assert {"gpt-5.6-sol", "gpt-5.6-mini"} <= set(standard_ids)


def test_retrieve_model(client: openai.OpenAI) -> None:
    model = client.models.retrieve("gpt-5.6-sol-ultrafast")
    assert (model.id, model.object, model.owned_by) == ("gpt-5.6-sol-ultrafast", "model", "system")


def test_retrieve_ultrafast_model_without_preview_is_not_found(standard_client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        standard_client.models.retrieve("gpt-5.6-sol-ultrafast")
    assert caught.value.code == "model_not_found"
    assert caught.value.message.endswith(
        "The model `gpt-5.6-sol-ultrafast` does not exist or you do not have access to it."
    )


def test_chat_completion_non_streaming(client: openai.OpenAI) -> None:
    completion = client.chat.completions.create(model="gpt-5.6-sol", messages=MESSAGES, seed=42)
    choice = completion.choices[0]
    assert completion.id.startswith("chatcmpl-")
    assert choice.finish_reason == "stop"
    assert choice.message.role == "assistant" and choice.message.content
    assert completion.service_tier == "default"
    assert completion.usage is not None
    assert completion.usage.completion_tokens > 0
    assert completion.usage.total_tokens == completion.usage.prompt_tokens + completion.usage.completion_tokens
    assert completion._request_id and completion._request_id.startswith("req_")


def test_same_seed_same_text_and_stream_matches_non_stream(client: openai.OpenAI) -> None:
    first = client.chat.completions.create(model="gpt-5.6-sol", messages=MESSAGES, seed=7)
    second = client.chat.completions.create(model="gpt-5.6-sol", messages=MESSAGES, seed=7)
    assert first.choices[0].message.content == second.choices[0].message.content
    stream = client.chat.completions.create(model="gpt-5.6-sol", messages=MESSAGES, seed=7, stream=True)
    streamed = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    assert streamed == first.choices[0].message.content


def test_streaming_with_include_usage(client: openai.OpenAI) -> None:
    chunks = list(
        client.chat.completions.create(
            model="gpt-5.6-sol",
            messages=MESSAGES,
            stream=True,
            stream_options={"include_usage": True},
            max_completion_tokens=12,
        )
    )
    assert chunks[0].choices[0].delta.role == "assistant"
    assert all(c.usage is None for c in chunks[:-1])
    last = chunks[-1]
    assert last.choices == [] and last.usage is not None
    assert last.usage.completion_tokens == 12
    assert chunks[-2].choices[0].finish_reason == "length"
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert content  # 12 tokens of text


def test_stream_helper_final_completion(client: openai.OpenAI) -> None:
    with client.chat.completions.stream(
        model="gpt-5.6-sol", messages=MESSAGES, seed=3, stream_options={"include_usage": True}
    ) as stream:
        deltas = [event.delta for event in stream if event.type == "content.delta"]
        final = stream.get_final_completion()
    assert "".join(deltas) == final.choices[0].message.content
    assert final.choices[0].message.role == "assistant"
    assert final.usage is not None and final.usage.completion_tokens > 0
    plain = client.chat.completions.create(model="gpt-5.6-sol", messages=MESSAGES, seed=3)
    assert final.choices[0].message.content == plain.choices[0].message.content


def test_max_tokens_cuts_with_finish_reason_length(client: openai.OpenAI) -> None:
    completion = client.chat.completions.create(model="gpt-5.6-sol", messages=MESSAGES, max_tokens=5)
    assert completion.choices[0].finish_reason == "length"
    assert completion.usage is not None and completion.usage.completion_tokens == 5


def test_n_choices(client: openai.OpenAI) -> None:
    completion = client.chat.completions.create(model="gpt-5.6-sol", messages=MESSAGES, n=3, seed=1)
    assert [c.index for c in completion.choices] == [0, 1, 2]
    assert len({c.message.content for c in completion.choices}) == 3
    with client.chat.completions.stream(model="gpt-5.6-sol", messages=MESSAGES, n=3, seed=1) as stream:
        final = stream.get_final_completion()
    assert [c.message.content for c in final.choices] == [c.message.content for c in completion.choices]


def test_stop_sequence_cuts_the_text(client: openai.OpenAI) -> None:
    full = client.chat.completions.create(model="gpt-5.6-sol", messages=MESSAGES, seed=11).choices[0].message.content
    assert full is not None
    word = full.split()[3]
    cut = client.chat.completions.create(model="gpt-5.6-sol", messages=MESSAGES, seed=11, stop=[word])
    assert cut.choices[0].message.content == full[: full.index(word)]
    assert cut.choices[0].finish_reason == "stop"


def test_chinese_prompt_gets_chinese_text(client: openai.OpenAI) -> None:
    completion = client.chat.completions.create(
        model="gpt-5.6-sol", messages=[{"role": "user", "content": "请写一篇关于速度的文章"}], max_tokens=20
    )
    text = completion.choices[0].message.content or ""
    assert sum("\u4e00" <= ch <= "\u9fff" for ch in text) >= 10


@pytest.mark.parametrize(
    ("requested", "reported"),
    [
        (None, "default"),
        ("auto", "default"),
        ("default", "default"),
        ("fast", "priority"),
        ("priority", "priority"),
        ("flex", "flex"),
    ],
)
def test_service_tier_resolution(client: openai.OpenAI, requested: str | None, reported: str) -> None:
    extra = {} if requested is None else {"service_tier": requested}
    completion = client.chat.completions.create(model="gpt-5.6-sol", messages=MESSAGES, max_tokens=3, **extra)
    assert completion.service_tier == reported


def test_ultrafast_on_chat_is_reported_as_a_value_the_sdk_types_accept(client: openai.OpenAI) -> None:
    by_id = client.chat.completions.create(model="gpt-5.6-sol-ultrafast", messages=MESSAGES, max_tokens=3)
    by_tier = client.chat.completions.create(
        model="gpt-5.6-sol", messages=MESSAGES, max_tokens=3, extra_body={"service_tier": "ultrafast"}
    )
    assert by_id.service_tier == by_tier.service_tier == "priority"


def test_reasoning_effort_adds_reasoning_tokens(client: openai.OpenAI) -> None:
    completion = client.chat.completions.create(
        model="gpt-5.6-sol", messages=MESSAGES, reasoning_effort="low", max_completion_tokens=500
    )
    assert completion.usage is not None and completion.usage.completion_tokens_details is not None
    assert completion.usage.completion_tokens_details.reasoning_tokens == 64


# -- Every access-denied path -----------------------------------------------------------------


def test_missing_key_is_401(server: MockServer) -> None:
    # The SDK refuses to send a request without a key, so this one goes below it.
    reply = httpx.get(f"{server.base_url}/models")
    assert reply.status_code == 401
    error = reply.json()["error"]
    assert error["code"] is None and error["type"] == "invalid_request_error"
    assert error["message"].startswith("You didn't provide an API key.")


def test_unknown_key_is_401_with_masked_key(make_client) -> None:  # type: ignore[no-untyped-def]
    c = make_client(api_key="sk-unknown-0123456789abcdef")
    with pytest.raises(openai.AuthenticationError) as caught:
        c.chat.completions.create(model="gpt-5.6-sol", messages=MESSAGES)
    assert caught.value.code == "invalid_api_key"
    assert "sk-unknown-0123456789abcdef" not in caught.value.message
    assert "Incorrect API key provided: sk-unk" in caught.value.message


def test_ultrafast_model_id_without_preview_is_404(standard_client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        standard_client.chat.completions.create(model="gpt-5.6-sol-ultrafast", messages=MESSAGES)
    assert caught.value.code == "model_not_found"
    assert "The model `gpt-5.6-sol-ultrafast` does not exist or you do not have access to it." in caught.value.message


def test_ultrafast_tier_without_preview_is_403(standard_client: openai.OpenAI) -> None:
    with pytest.raises(openai.PermissionDeniedError) as caught:
        standard_client.chat.completions.create(
            model="gpt-5.6-sol", messages=MESSAGES, extra_body={"service_tier": "ultrafast"}
        )
    assert caught.value.param == "service_tier"
    assert caught.value.code == "service_tier_not_available"


def test_ultrafast_on_a_model_without_it_is_400(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(
            model="gpt-5.6-mini", messages=MESSAGES, extra_body={"service_tier": "ultrafast"}
        )
    assert caught.value.param == "service_tier"
    assert caught.value.code == "invalid_value"


def test_unknown_model_is_404(client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        client.chat.completions.create(model="gpt-nonexistent", messages=MESSAGES)
    assert caught.value.code == "model_not_found"


def test_downgrade_policy_serves_ultrafast_at_default() -> None:
    fixture = fixture_with(policies=Policies(ultrafast_without_access="downgrade").model_dump())
    with MockServer(time_scale=0, fixture=fixture) as server:
        c = openai.OpenAI(base_url=server.base_url, api_key="sk-mock-standard", _strict_response_validation=True)
        completion = c.chat.completions.create(
            model="gpt-5.6-sol", messages=MESSAGES, max_tokens=3, extra_body={"service_tier": "ultrafast"}
        )
        assert completion.service_tier == "default"
        # The ultrafast model id stays invisible: downgrade only applies to the service_tier parameter.
        with pytest.raises(openai.NotFoundError):
            c.chat.completions.create(model="gpt-5.6-sol-ultrafast", messages=MESSAGES)


def test_time_scale_changes_timing_only_not_content(client: openai.OpenAI) -> None:
    instant = client.chat.completions.create(model="gpt-5.6-sol", messages=MESSAGES, seed=21)
    with MockServer(time_scale=1, seed=1) as real_time:
        c = openai.OpenAI(base_url=real_time.base_url, api_key="sk-mock-preview", _strict_response_validation=True)
        paced = c.chat.completions.create(
            model="gpt-5.6-sol",
            messages=MESSAGES,
            seed=21,
            extra_headers={"x-mock-tokens-per-second": "100000", "x-mock-ttft-ms": "0"},
        )
    assert paced.choices[0].message.content == instant.choices[0].message.content
    assert paced.usage == instant.usage
