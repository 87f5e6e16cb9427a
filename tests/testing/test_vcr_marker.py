"""pytest-recording's own cassettes, replayed by the mockserver plugin as a user would: a suite records
with ``@pytest.mark.vcr``, then runs again on the ``mockserver`` fixture with the recording turned off."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mockserver import MockServer

pytest_plugins = ["pytester"]

SAMPLE = """
import json, os
import httpx, openai
import pytest

def _ask(request):
    if os.environ.get("REPLAY"):
        request.getfixturevalue("mockserver")  # OPENAI_BASE_URL and the key as the plugin sets them
    client = openai.OpenAI(http_client=httpx.Client(), max_retries=0)  # httpx: what vcrpy records
    messages = [{"role": "user", "content": "Name three rivers."}]
    whole = client.chat.completions.create(model="gpt-5.6-mini", messages=messages)
    stream = client.chat.completions.create(model="gpt-5.6-mini", messages=messages, stream=True)
    streamed = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    with open(os.environ["ANSWERS"], "a") as out:
        out.write(json.dumps([whole.choices[0].message.content, streamed]) + "\\n")

@pytest.mark.vcr
def test_rivers(request):
    _ask(request)
"""


def test_pytest_recording_cassettes_replay_through_the_marker(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_sample=SAMPLE)
    first, second = pytester.path / "first.jsonl", pytester.path / "second.jsonl"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-mock-standard")
    with MockServer(time_scale=0, seed=5) as upstream:
        monkeypatch.setenv("OPENAI_BASE_URL", upstream.base_url)
        monkeypatch.setenv("ANSWERS", str(first))
        recorded = pytester.runpytest_subprocess("--record-mode=once", "-p", "no:cacheprovider")
        recorded.assert_outcomes(passed=1)
    cassette = pytester.path / "cassettes" / "test_sample" / "test_rivers.yaml"
    assert "text/event-stream" in cassette.read_text()

    monkeypatch.delenv("OPENAI_BASE_URL")
    monkeypatch.setenv("ANSWERS", str(second))
    monkeypatch.setenv("REPLAY", "1")
    replayed = pytester.runpytest_subprocess("--disable-recording", "-p", "no:cacheprovider")
    replayed.assert_outcomes(passed=1)
    assert json.loads(second.read_text()) == json.loads(first.read_text())
    assert not list(Path(pytester.path / "cassettes").rglob("*.jsonl"))  # replayed, never recorded over
