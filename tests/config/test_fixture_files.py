"""Fixture files: ``extends:`` chains merged like a config patch, and YAML errors that name the place."""

from __future__ import annotations

from pathlib import Path

import pytest

from mockserver.config.fixture import ConfigError, load_fixture

pytest_plugins = ["pytester"]


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_extends_default_with_only_scripts_loads(tmp_path: Path) -> None:
    fixture = load_fixture(write(tmp_path / "my.yaml", "extends: default\nscripts:\n  - reply: {text: pong}\n"))
    built_in = load_fixture()
    assert [rule.reply.text for rule in fixture.scripts] == ["pong"]
    assert fixture.model_dump(exclude={"scripts"}) == built_in.model_dump(exclude={"scripts"})


def test_mappings_merge_lists_replace_and_null_resets(tmp_path: Path) -> None:
    fixture = load_fixture(
        write(
            tmp_path / "my.yaml",
            "extends: default\n"
            "profiles: {ultrafast: {tokens_per_second: 2000}}\n"
            "accounts: [{key: sk-only, tiers: [default]}]\n"
            "organizations: null\n",
        )
    )
    built_in = load_fixture()
    assert fixture.profiles["ultrafast"].tokens_per_second == 2000
    assert fixture.profiles["ultrafast"].ttft_ms == built_in.profiles["ultrafast"].ttft_ms
    assert [a.key for a in fixture.accounts] == ["sk-only"]
    assert fixture.organizations == []
    assert fixture.models == built_in.models


def test_a_chain_of_files_relative_to_each_other(tmp_path: Path) -> None:
    (tmp_path / "base").mkdir()
    write(tmp_path / "base" / "team.yaml", "extends: default\npolicies: {ultrafast_without_access: downgrade}\n")
    write(tmp_path / "base" / "fast.yaml", "extends: team.yaml\nprofiles: {default: {ttft_ms: 0}}\n")
    fixture = load_fixture(write(tmp_path / "mine.yaml", "extends: base/fast.yaml\nseed_note: null\n"))
    assert fixture.policies.ultrafast_without_access == "downgrade"
    assert fixture.profiles["default"].ttft_ms == 0


def test_a_loop_is_refused(tmp_path: Path) -> None:
    write(tmp_path / "a.yaml", "extends: b.yaml\n")
    write(tmp_path / "b.yaml", "extends: a.yaml\n")
    with pytest.raises(ConfigError, match=r"b\.yaml: extends makes a loop \(.*a\.yaml -> .*b\.yaml -> .*a\.yaml\)"):
        load_fixture(tmp_path / "a.yaml")


@pytest.mark.parametrize(
    ("value", "expected"),
    [("nope.yaml", r"nope\.yaml: cannot be read"), ("42", r"extends: expected 'default' .* got 42")],
)
def test_a_bad_base_is_named(tmp_path: Path, value: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=expected):
        load_fixture(write(tmp_path / "my.yaml", f"extends: {value}\n"))


def test_the_merged_result_is_validated_naming_the_file(tmp_path: Path) -> None:
    path = write(tmp_path / "my.yaml", "extends: default\nprofiles: {flex: {tokens_per_second: 0}}\n")
    with pytest.raises(ConfigError, match=r"my\.yaml: profiles\.flex\.tokens_per_second: Input should be greater"):
        load_fixture(path)


def test_a_yaml_syntax_error_names_file_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path / "my.yaml", "extends: default\nscripts: [oops\n")
    with pytest.raises(ConfigError) as error:
        load_fixture(path)
    assert str(error.value) == (
        f"config file {path}: YAML syntax error at line 3, column 1: expected ',' or ']', but got '<stream end>'; "
        "correct the file (`mockserver init` writes a valid one to start from)"
    )


def test_the_marker_takes_a_scenario_with_extends(pytester: pytest.Pytester) -> None:
    """The same file works with ``--config`` and with the marker: the merged fixture replaces the one in force."""
    pytester.makefile(
        ".yaml",
        scenario='extends: default\nscripts:\n  - match: {message: "(?i)^ping$"}\n    reply: {text: pong}\n',
    )
    pytester.makepyfile(
        test_scenario="""
import pytest


@pytest.mark.mockserver(config="scenario.yaml")
def test_scripted(mockserver):
    reply = mockserver.client().chat.completions.create(
        model="gpt-5.6-sol", messages=[{"role": "user", "content": "ping"}]
    )
    assert reply.choices[0].message.content == "pong"
"""
    )
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
