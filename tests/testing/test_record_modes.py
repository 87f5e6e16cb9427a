"""The plugin's record modes, run as a user runs them: record once against an upstream, then replay with it gone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mockserver import MockServer
from mockserver.cassettes import files

pytest_plugins = ["pytester"]

SAMPLE = """
import json, os
import openai
import pytest

def _ask(mockserver, content):
    client = openai.OpenAI()  # OPENAI_BASE_URL and the key as the plugin set them
    reply = client.chat.completions.create(model="gpt-5.6-sol", messages=[{"role": "user", "content": content}],
                                           max_tokens=25)
    client.close()
    with open(os.environ["ANSWERS"], "a") as out:
        test = os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0]
        out.write(json.dumps([test, reply.choices[0].message.content]) + "\\n")

def test_haiku(mockserver):
    _ask(mockserver, "A haiku about tide pools.")
    stream = mockserver.client().chat.completions.create(
        model="gpt-5.6-sol", messages=[{"role": "user", "content": "Stream it."}], stream=True, max_tokens=10)
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices)

@pytest.mark.mockserver(cassette="shared.jsonl")
def test_shared_one(mockserver):
    _ask(mockserver, "One.")

@pytest.mark.mockserver(cassette="shared.jsonl")
def test_shared_two(mockserver):
    _ask(mockserver, "Two.")
"""


def _answers(path: Path) -> list[list[str]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_first_run_records_and_the_second_replays_with_the_upstream_stopped(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_sample=SAMPLE)
    first, second = pytester.path / "first.jsonl", pytester.path / "second.jsonl"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-mock-preview")  # the upstream's key, sent through the proxy
    with MockServer(time_scale=0, seed=21) as upstream:
        monkeypatch.setenv("ANSWERS", str(first))
        recorded = pytester.runpytest_subprocess(
            "--mockserver-record-mode=once", f"--mockserver-upstream={upstream.url}", "-p", "no:cacheprovider"
        )
        recorded.assert_outcomes(passed=3)
        assert upstream.requests.filter(path="/v1/chat/completions").call_count == 4
    own = pytester.path / "cassettes" / "test_sample" / "test_haiku.jsonl"
    assert [r.response.stream for r in files.load(own).records] == [False, True]
    assert len(files.load(pytester.path / "shared.jsonl").records) == 2

    monkeypatch.setenv("ANSWERS", str(second))
    replayed = pytester.runpytest_subprocess("--mockserver-record-mode=none", "-p", "no:cacheprovider")
    replayed.assert_outcomes(passed=3)
    assert _answers(second) == _answers(first)  # the recorded replies, not the replaying server's own

    # Recording again ("all") replaces a cassette; "new" only appends what it lacks.
    with MockServer(time_scale=0, seed=22) as upstream:
        again = pytester.runpytest_subprocess(
            "--mockserver-record-mode=new", f"--mockserver-upstream={upstream.url}", "-p", "no:cacheprovider"
        )
        again.assert_outcomes(passed=3)
        assert upstream.requests.filter(path="/v1/chat/completions").call_count == 0  # all known: replayed
        assert len(files.load(own).records) == 2
        whole = pytester.runpytest_subprocess(
            "--mockserver-record-mode=all", f"--mockserver-upstream={upstream.url}", "-p", "no:cacheprovider",
            "-k", "haiku",
        )  # fmt: skip
        whole.assert_outcomes(passed=1)
        assert upstream.requests.filter(path="/v1/chat/completions").call_count == 2
        assert len(files.load(own).records) == 2


def test_a_record_mode_without_an_upstream_fails_the_test_with_the_reason(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_sample="def test_it(mockserver):\n    pass\n")
    result = pytester.runpytest("--mockserver-record-mode=all")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*record mode 'all' needs --mockserver-upstream URL*"])
