"""A recording replays as recorded: its models are served with no preset or fixture entry, listed by
``GET /v1/models``, and the fixture's access rules still hold for the keys it knows."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anthropic
import httpx
import pytest

from mockserver import MockServer
from mockserver.testing.recorder import RecordingProxy
from tests.support import fixture

CLAUDE = "claude-opus-4-8"  # the model id of the claude-opus-4.8-fast preset
ASKED = {"model": CLAUDE, "max_tokens": 100, "messages": [{"role": "user", "content": "Say hello."}]}
LIMITED = "sk-mock-limited"  # a key whose project may use one other model only


def _claude(base: str, key: str = "sk-mock-standard") -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=base, api_key=key, max_retries=0, _strict_response_validation=True)


def test_a_claude_recording_replays_with_no_other_flag(
    upstream: MockServer, record: Callable[..., RecordingProxy]
) -> None:
    proxy = record(upstream.url)
    recorded = _claude(proxy.url).messages.create(**ASKED)
    with _claude(proxy.url).messages.stream(**ASKED) as stream:
        streamed = stream.get_final_message()
    proxy.stop()

    with MockServer(time_scale=0, replay=[str(proxy.cassette)]) as replay:  # no preset, no fixture
        assert _claude(replay.url).messages.create(**ASKED).content == recorded.content
        with _claude(replay.url).messages.stream(**ASKED) as again:
            assert again.get_final_message().content == streamed.content
        headers = {"x-api-key": "sk-mock-standard", "anthropic-version": "2023-06-01"}
        listed = httpx.get(f"{replay.url}/v1/models", headers=headers).json()
    assert CLAUDE in [m["id"] for m in listed["data"]]


def test_access_rules_hold_for_the_recorded_models(upstream: MockServer, record: Callable[..., Any]) -> None:
    proxy = record(upstream.url)
    _claude(proxy.url).messages.create(**ASKED)
    proxy.stop()
    limited = fixture(keys=[{"key": LIMITED, "models": ["gpt-5.6-mini"]}])
    with MockServer(time_scale=0, replay=[str(proxy.cassette)], fixture=limited) as replay:
        assert _claude(replay.url).messages.create(**ASKED).content
        with pytest.raises(anthropic.PermissionDeniedError):
            _claude(replay.url, LIMITED).messages.create(**ASKED)
        with pytest.raises(anthropic.AuthenticationError):
            _claude(replay.url, "sk-not-in-the-fixture").messages.create(**ASKED)
