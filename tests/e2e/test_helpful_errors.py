"""Errors that help, from a real server: typos in x-mock-fault and PATCH /_mock/config name the
closest known field, and a request without /v1 logs one warning while the reply stays the live 404."""

from __future__ import annotations

import logging
import re

import httpx
import openai
import pytest

from mockserver import MockServer
from tests.support import MESSAGES, sdk


@pytest.fixture(scope="module")
def server() -> MockServer:
    with MockServer(time_scale=0) as running:
        yield running  # type: ignore[misc]


def test_an_x_mock_fault_typo_names_the_closest_field(server: MockServer) -> None:
    with sdk(server) as client, pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(
            model="gpt-5.6-sol", messages=MESSAGES, extra_headers={"x-mock-fault": "stauts=503"}
        )
    assert "unknown field `stauts`, did you mean `status`?" in caught.value.message
    assert caught.value.param == "x-mock-fault"


def test_a_patch_typo_names_the_closest_field(server: MockServer) -> None:
    for patch, guess in [
        ({"time_scal": 1}, "time_scale"),
        ({"profiles": {"ultrafast": {"tokens_per_secnd": 300}}}, "tokens_per_second"),
        ({"capacity": {"retry_after": 5}}, "retry_after_ms"),
    ]:
        reply = httpx.patch(f"{server.url}/_mock/config", json=patch)
        assert reply.status_code == 400
        error = reply.json()["error"]
        assert f", did you mean `{guess}`?" in error["message"], error
        assert error["code"] == "unknown_parameter"


def test_a_misspelled_required_field_is_named_as_the_typo_it_is(server: MockServer) -> None:
    """``kee`` for ``key`` is both a missing field and an unknown one: the answer names the typo,
    with the closest field, not pydantic's "Extra inputs are not permitted"; one full stop, after '?'."""
    reply = httpx.patch(f"{server.url}/_mock/config", json={"accounts": [{"kee": "sk-x"}]})
    assert reply.status_code == 400
    error = reply.json()["error"]
    assert error["code"] == "unknown_parameter" and error["param"] == "accounts.0.kee", error
    assert error["message"].endswith("unknown field `kee`, did you mean `key`?"), error
    assert "Extra inputs" not in error["message"]


def test_a_fault_field_without_a_value_says_so(server: MockServer) -> None:
    headers = {"authorization": "Bearer sk-mock-preview", "x-mock-fault": "status"}
    body = {"model": "gpt-5.6-sol", "messages": MESSAGES}
    reply = httpx.post(f"{server.url}/v1/chat/completions", json=body, headers=headers)
    assert reply.status_code == 400
    message = reply.json()["error"]["message"]
    assert "'status' needs a value: status=..." in message and "did you mean" not in message, message
    assert not message.endswith("?.")


def test_a_configure_keyword_typo_names_the_closest_setting(server: MockServer) -> None:
    with pytest.raises(
        ValueError, match=re.escape("unknown setting `tokens_per_secnd`, did you mean `tokens_per_second`?")
    ):
        server.configure(tokens_per_secnd=300)


def test_a_path_without_v1_logs_one_warning_and_gets_the_live_404(
    server: MockServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="mockserver")
    bare = openai.OpenAI(base_url=server.url, api_key="sk-mock-preview", max_retries=0)
    with bare:
        for _ in range(3):
            with pytest.raises(openai.NotFoundError) as caught:
                bare.models.list()
            assert "Invalid URL (GET /models)" in caught.value.message
    warnings = [r.getMessage() for r in caplog.records if "has no /v1" in r.getMessage()]
    assert warnings == [
        f"GET /models has no /v1 and gets the live API's 404: a base URL must end in /v1, e.g. "
        f"OPENAI_BASE_URL={server.url}/v1 (the anthropic SDKs add /v1 themselves: ANTHROPIC_BASE_URL={server.url})"
    ]
    assert httpx.get(f"{server.url}/nothing/here").status_code == 404
    assert not [r for r in caplog.records if "/nothing/here" in r.getMessage()]


def test_a_misspelled_journal_filter_is_refused_not_ignored(server: MockServer) -> None:
    """``?type=`` (for ``error_type``) was ignored, so the test saw every entry as if it matched."""
    reply = httpx.get(f"{server.url}/_mock/requests", params={"type": "invalid_request_error"})
    assert reply.status_code == 400
    error = reply.json()["error"]
    assert error["param"] == "type" and error["code"] == "unknown_parameter", error
    assert "unknown filter `type`" in error["message"]
    reply = httpx.get(f"{server.url}/_mock/requests", params={"cod": "rate_limit_exceeded"})
    assert "did you mean `code`?" in reply.json()["error"]["message"]
    assert httpx.get(f"{server.url}/_mock/requests", params={"code": "x", "limit": 5}).status_code == 200


def test_a_preset_name_asked_for_as_a_model_names_its_model() -> None:
    import anthropic

    with MockServer(time_scale=0, presets=["claude-opus-4.8-fast"]) as served:
        client = anthropic.Anthropic(base_url=served.url, api_key="sk-mock-preview", max_retries=0)
        with client, pytest.raises(anthropic.NotFoundError) as caught:
            client.messages.create(model="claude-opus-4.8-fast", max_tokens=8, messages=MESSAGES)  # type: ignore[arg-type]
    assert caught.value.body["error"]["message"] == (  # type: ignore[index]
        "model: claude-opus-4.8-fast. Did you mean `claude-opus-4-8`, the model of preset `claude-opus-4.8-fast`?"
    )  # Anthropic's own words first


def test_a_preset_that_is_not_served_says_how_to_serve_it(server: MockServer) -> None:
    reply = httpx.post(
        f"{server.url}/v1/messages",
        headers={"x-api-key": "sk-mock-preview", "anthropic-version": "2023-06-01"},
        json={"model": "claude-opus-4.8-fast", "max_tokens": 8, "messages": MESSAGES},
    )
    assert reply.status_code == 404
    assert reply.json()["error"]["message"] == (
        "model: claude-opus-4.8-fast. `claude-opus-4.8-fast` is a preset: serve it with "
        "`--preset claude-opus-4.8-fast`, and ask for its model `claude-opus-4-8`."
    )


def test_an_id_spelled_with_dots_gets_a_guess_and_a_hidden_one_the_live_words(server: MockServer) -> None:
    with sdk(server) as client, pytest.raises(openai.NotFoundError) as caught:
        client.chat.completions.create(model="GPT_5.6_sol", messages=MESSAGES)
    assert caught.value.body["message"] == (  # type: ignore[index]
        "The model `GPT_5.6_sol` does not exist or you do not have access to it. Did you mean `gpt-5.6-sol`?"
    )
    with sdk(server, "sk-mock-standard") as client, pytest.raises(openai.NotFoundError) as hidden:
        client.chat.completions.create(model="gpt-5.6-sol-ultrafast", messages=MESSAGES)
    assert hidden.value.body["message"] == (  # type: ignore[index]
        "The model `gpt-5.6-sol-ultrafast` does not exist or you do not have access to it."
    )


def test_an_id_with_a_word_added_names_the_served_one_and_an_unlike_one_gets_no_guess(server: MockServer) -> None:
    with sdk(server) as client:
        for asked, hint in [("gpt-5.6-sol-fast", " Did you mean `gpt-5.6-sol`?"), ("gpt-nope", "")]:
            with pytest.raises(openai.NotFoundError) as caught:
                client.chat.completions.create(model=asked, messages=MESSAGES)
            live = f"The model `{asked}` does not exist or you do not have access to it."
            assert caught.value.body["message"] == live + hint  # type: ignore[index]
