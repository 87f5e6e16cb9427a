"""A misspelled @pytest.mark.mockserver argument fails the test naming the closest argument."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]


def test_a_marker_typo_names_the_closest_argument(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.mockserver(time_scal=1)
        def test_runtime(mockserver):
            pass

        @pytest.mark.mockserver(tokens_per_secnd=300)
        def test_convenience(mockserver):
            pass

        @pytest.mark.mockserver(confg="scenario.yaml")
        def test_scenario(mockserver):
            pass
        """
    )
    result = pytester.runpytest("--strict-markers", "-W", "error")
    result.assert_outcomes(errors=3)
    result.stdout.fnmatch_lines(
        [
            "*@pytest.mark.mockserver: unknown argument `time_scal`, did you mean `time_scale`?*",
            "*@pytest.mark.mockserver: unknown argument `tokens_per_secnd`, did you mean `tokens_per_second`?*",
            "*@pytest.mark.mockserver: unknown argument `confg`, did you mean `config`?*",
        ]
    )
