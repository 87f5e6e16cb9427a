"""The command line: help text, environment variables, and start-up errors without tracebacks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mockserver import cli
from mockserver.config.fixture import ConfigError
from mockserver.config.settings import Settings


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mockserver", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def test_serve_help_explains_every_option() -> None:
    result = run_cli("serve", "--help")
    assert result.returncode == 0
    for option in ("--host", "--port", "--config", "--time-scale", "--seed", "--log-level", "--journal-size"):
        assert option in result.stdout
    for variable in ("MOCKSERVER_HOST", "MOCKSERVER_PORT", "MOCKSERVER_CONFIG", "MOCKSERVER_TIME_SCALE"):
        assert variable in result.stdout


def test_bad_config_names_file_field_and_problem(tmp_path: Path) -> None:
    config = tmp_path / "broken.yaml"
    config.write_text(
        "profiles:\n  default: {tokens_per_second: -5, ttft_ms: 10}\n"
        "  priority: {tokens_per_second: 1, ttft_ms: 1}\n  flex: {tokens_per_second: 1, ttft_ms: 1}\n"
        "  ultrafast: {tokens_per_second: 1, ttft_ms: 1}\n"
        "models: [{id: m}]\naccounts: [{key: k}]\n"
    )
    result = run_cli("serve", "--config", str(config), "--port", "0")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert str(config) in result.stderr
    assert "profiles.default.tokens_per_second" in result.stderr
    assert "greater than or equal to 0.01" in result.stderr


@pytest.mark.parametrize(
    ("content", "expected"),
    [("models: [oops", "YAML syntax error at line 1, column 14"), ("- just a list", "top level must be a mapping")],
)
def test_unparseable_config(tmp_path: Path, content: str, expected: str) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text(content)
    result = run_cli("serve", "--port", "0", env={"MOCKSERVER_CONFIG": str(config)})
    assert result.returncode == 2
    assert expected in result.stderr and "Traceback" not in result.stderr


def test_missing_config_file(tmp_path: Path) -> None:
    result = run_cli("serve", "--config", str(tmp_path / "nope.yaml"))
    assert result.returncode == 2
    assert "nope.yaml" in result.stderr and "cannot be read" in result.stderr


def test_environment_variables_set_defaults_and_flags_win() -> None:
    settings = Settings.from_env({"MOCKSERVER_PORT": "9001", "MOCKSERVER_TIME_SCALE": "0", "MOCKSERVER_SEED": "4"})
    assert (settings.port, settings.time_scale, settings.seed) == (9001, 0.0, 4)
    args = cli.build_parser(settings).parse_args(["serve", "--port", "9002"])
    assert (args.port, args.time_scale) == (9002, 0.0)


def test_bad_environment_value_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="MOCKSERVER_PORT='abc' is not a number"):
        Settings.from_env({"MOCKSERVER_PORT": "abc"})
    result = run_cli("serve", env={"MOCKSERVER_TIME_SCALE": "-1"})
    assert result.returncode == 2 and "time_scale must be 0 or more" in result.stderr
