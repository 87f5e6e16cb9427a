"""The pytest plugin, run as a user would run it (pytester)."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest_plugins = ["pytester"]


def test_plugin_loads_without_heavy_imports() -> None:
    code = (
        "import sys, mockserver.testing.pytest_plugin; "
        "heavy = ('fastapi', 'uvicorn', 'openai', 'faker', 'mockserver.server.app'); "
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_fixture_client_journal_and_fault(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import openai, pytest

        def test_ultrafast(mockserver):
            client = mockserver.client("sk-mock-preview", strict=True)
            reply = client.chat.completions.create(
                model="gpt-5.6-sol-ultrafast", messages=[{"role": "user", "content": "hi"}]
            )
            assert reply.service_tier == "priority"
            call = mockserver.requests.assert_called_once(path="/v1/chat/completions")
            assert call.tier == "ultrafast" and call.status == 200
            assert call.key == "sk-moc*****view"

        @pytest.mark.mockserver(faults=["once status=503"])
        def test_retry_after_one_shot_503(mockserver):
            mockserver.client().chat.completions.create(
                model="gpt-5.6-sol", messages=[{"role": "user", "content": "hi"}]
            )
            assert [c.status for c in mockserver.requests] == [503, 200]

        def test_configure_is_undone_after_each_test(mockserver):
            mockserver.client().chat.completions.create(
                model="gpt-5.6-sol", messages=[{"role": "user", "content": "hi"}]
            )
            assert len(mockserver.requests) == 1  # earlier tests' entries are not here

        def test_env_points_the_default_client_here(mockserver):
            assert [m.id for m in openai.OpenAI().models.list()]
            assert mockserver.requests.last.path == "/v1/models"
        """
    )
    result = pytester.runpytest("--strict-markers", "-W", "error")
    result.assert_outcomes(passed=4)


def test_marker_scenario_file_and_settings(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", scenario="policies:\n  ultrafast_without_access: downgrade\n")
    pytester.makepyfile(
        """
        import pytest

        pytestmark = pytest.mark.mockserver(time_scale=0)

        @pytest.mark.mockserver(config="scenario.yaml", tokens_per_second={"default": 99})
        def test_downgrade(mockserver):
            reply = mockserver.client("sk-mock-standard").chat.completions.create(
                model="gpt-5.6-sol", messages=[{"role": "user", "content": "hi"}],
                extra_body={"service_tier": "ultrafast"},
            )
            assert reply.service_tier == "default"
            assert mockserver.server.state.fixture.profiles["default"].tokens_per_second == 99

        def test_back_to_default(mockserver):
            assert mockserver.server.state.fixture.policies.ultrafast_without_access == "deny"

        @pytest.mark.mockserver(faults=["status=999"])
        def test_bad_marker_fails_with_the_reason(mockserver):
            pass
        """
    )
    result = pytester.runpytest("--strict-markers")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*@pytest.mark.mockserver: *status*"])


@pytest.mark.parametrize(("option", "distinct"), [([], 1), (["--mockserver-scope=function"], 2)])
def test_server_scope_is_configurable(pytester: pytest.Pytester, option: list[str], distinct: int) -> None:
    pytester.makeconftest("PORTS = []")
    pytester.makepyfile(
        """
        from conftest import PORTS

        def test_one(mockserver):
            PORTS.append(mockserver.server.port)

        def test_two(mockserver):
            PORTS.append(mockserver.server.port)

        def test_count():
            assert len(set(PORTS)) == DISTINCT
        """.replace("DISTINCT", str(distinct))
    )
    pytester.runpytest(*option).assert_outcomes(passed=3)


def test_ini_options(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nmockserver_time_scale = 0.5\nmockserver_env = false\n")
    pytester.makepyfile(
        """
        import os

        def test_settings(mockserver):
            assert mockserver.server.state.settings.time_scale == 0.5
            assert "OPENAI_BASE_URL" not in os.environ or os.environ["OPENAI_BASE_URL"] != mockserver.base_url
        """
    )
    pytester.runpytest().assert_outcomes(passed=1)


def test_marker_and_configure_script_replies(pytester: pytest.Pytester) -> None:
    pytester.makefile(
        ".yaml",
        scenario='scripts:\n  - match: {message: "(?i)^ping$"}\n    reply: {text: pong}\n',
    )
    pytester.makepyfile(
        """
        import openai, pytest

        def ask(mockserver, text):
            return mockserver.client(strict=True).chat.completions.create(
                model="gpt-5.6-sol", messages=[{"role": "user", "content": text}]
            ).choices[0].message.content

        @pytest.mark.mockserver(scripts={"(?i)capital of france": "Paris."})
        def test_marker(mockserver):
            assert ask(mockserver, "What is the capital of France?") == "Paris."
            assert mockserver.requests.last.script == {"index": 0, "name": None, "step": None}

        @pytest.mark.mockserver(scripts=[{"reply": {"sequence": [{"text": "one"}, {"text": "two"}]}}])
        def test_sequence_first_run(mockserver):
            assert [ask(mockserver, "x") for _ in range(3)] == ["one", "two", "two"]

        @pytest.mark.mockserver(scripts=[{"reply": {"sequence": [{"text": "one"}, {"text": "two"}]}}])
        def test_sequence_starts_again_in_the_next_test(mockserver):
            assert ask(mockserver, "x") == "one"

        @pytest.mark.mockserver(config="scenario.yaml")
        def test_scenario_file(mockserver):
            assert ask(mockserver, "ping") == "pong"
            mockserver.configure(scripts=[{"error": "status=429"}])
            with pytest.raises(openai.RateLimitError):
                mockserver.client(max_retries=0).chat.completions.create(
                    model="gpt-5.6-sol", messages=[{"role": "user", "content": "ping"}]
                )

        def test_no_scripts_after_the_marked_tests(mockserver):
            assert mockserver.server.state.fixture.scripts == []
            assert ask(mockserver, "ping") != "pong"

        @pytest.mark.mockserver(scripts=[{"reply": {"text": "a", "error": "status=500"}}])
        def test_bad_script_fails_with_the_reason(mockserver):
            pass
        """
    )
    result = pytester.runpytest("--strict-markers", "-W", "error")
    result.assert_outcomes(passed=5, errors=1)
    result.stdout.fnmatch_lines(["*@pytest.mark.mockserver: *a reply needs exactly one of text, tool_calls, error*"])
