"""The first minutes on the command line: ``init``, ``config --print``, the start-up summary, and
each start-up that cannot complete ending with one line (cause and fix) and exit status 2."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from mockserver.config.fixture import default_fixture_path, load_fixture

STARTED = re.compile(r"^mockserver: an OpenAI-compatible API at (http://\S+)/v1$")


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mockserver", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )


@contextmanager
def serving(*args: str, cwd: Path) -> Iterator[tuple[str, list[str]]]:
    """``mockserver serve ARGS --port 0``: the root URL from its summary, and the summary's lines."""
    process = subprocess.Popen(
        [sys.executable, "-m", "mockserver", "serve", "--port", "0", "--time-scale", "0", *args],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        lines = [process.stderr.readline().rstrip("\n")]
        started = STARTED.match(lines[0])
        assert started, f"no start-up summary: {lines[0]!r}"
        while not lines[-1].startswith("  (--quiet"):
            lines.append(process.stderr.readline().rstrip("\n"))
        root = started.group(1)
        wait_for_health(root)
        yield root, lines
    finally:
        process.terminate()
        process.communicate(timeout=10)  # reads the rest and closes the pipe


def wait_for_health(root: str) -> None:
    for _ in range(200):
        try:
            if httpx.get(f"{root}/health", timeout=0.5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    raise AssertionError(f"{root} never answered /health")


def chat(root: str, text: str) -> str:
    reply = httpx.post(
        f"{root}/v1/chat/completions",
        headers={"authorization": "Bearer sk-mock-preview"},
        json={"model": "gpt-5.6-sol", "messages": [{"role": "user", "content": text}]},
        timeout=10,
    )
    assert reply.status_code == 200, reply.text
    content: str = reply.json()["choices"][0]["message"]["content"]
    return content


# -- mockserver, init, config ------------------------------------------------------------------------


def test_mockserver_alone_prints_the_help() -> None:
    result = run_cli()
    assert result.returncode == 0
    assert result.stdout.startswith("usage: mockserver")
    for command in ("serve", "init", "config"):
        assert command in result.stdout


def test_init_then_serve_on_the_written_file(tmp_path: Path) -> None:
    result = run_cli("init", "my.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    written = (tmp_path / "my.yaml").read_text(encoding="utf-8")
    assert written == default_fixture_path().read_text(encoding="utf-8")
    assert written.count("#") > 40  # commented
    assert result.stderr.splitlines()[-1] == "start the server on it with: mockserver serve --config my.yaml"
    with serving("--config", "my.yaml", cwd=tmp_path) as (root, summary):
        assert chat(root, "Hello")
        assert f"  fixture      {tmp_path.resolve() / 'my.yaml'}" in summary


def test_init_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    (tmp_path / "my.yaml").write_text("mine\n")
    result = run_cli("init", "my.yaml", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == "mockserver: my.yaml already exists; pass --force to overwrite it, or give another PATH\n"
    assert (tmp_path / "my.yaml").read_text() == "mine\n"
    assert run_cli("init", "my.yaml", "--force", cwd=tmp_path).returncode == 0
    assert load_fixture(tmp_path / "my.yaml") == load_fixture()


def test_init_writes_to_stdout_with_a_dash(tmp_path: Path) -> None:
    result = run_cli("init", "-", cwd=tmp_path)
    assert result.returncode == 0 and result.stdout == default_fixture_path().read_text(encoding="utf-8")
    assert list(tmp_path.iterdir()) == []


def test_config_print_fills_in_every_default_and_loads_back(tmp_path: Path) -> None:
    (tmp_path / "partial.yaml").write_text("extends: default\npolicies: {ultrafast_without_access: downgrade}\n")
    result = run_cli("config", "--print", "--config", "partial.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("# The fixture in force: partial.yaml, every default filled in.\n")
    defaults = ("max_output_tokens: 128000", "jitter: 0.1", "when_full: reject", "default_reasoning_effort: null")
    for filled_in in defaults:
        assert filled_in in result.stdout
    (tmp_path / "printed.yaml").write_text(result.stdout)
    printed = load_fixture(tmp_path / "printed.yaml")
    assert printed == load_fixture(tmp_path / "partial.yaml")
    assert printed.policies.ultrafast_without_access == "downgrade"


def test_config_print_follows_mockserver_config(tmp_path: Path) -> None:
    (tmp_path / "partial.yaml").write_text("extends: default\noutput_tokens: {min: 5, max: 6}\n")
    result = run_cli("config", env={"MOCKSERVER_CONFIG": str(tmp_path / "partial.yaml")})
    assert result.returncode == 0 and "output_tokens:\n  min: 5\n  max: 6\n" in result.stdout


# -- serve: the summary and extends --------------------------------------------------------------------


def test_a_fixture_with_extends_default_and_only_scripts_serves(tmp_path: Path) -> None:
    (tmp_path / "scripts.yaml").write_text(
        'extends: default\nscripts:\n  - match: {message: "(?i)^ping$"}\n    reply: {text: pong}\n'
    )
    with serving("--config", "scripts.yaml", cwd=tmp_path) as (root, summary):
        assert chat(root, "ping") == "pong"
        assert chat(root, "Hello") != "pong"
    text = "\n".join(summary)
    preview_key = r"^  keys         sk-mock-preview  default, priority, flex, ultrafast \(Ultrafast preview access\)$"
    assert re.search(preview_key, text, re.M), "the built-in keys are public fakes: shown in full"
    for expected in (
        f"  use it       export OPENAI_BASE_URL={root}/v1 OPENAI_API_KEY=<one of the keys below>",
        "  models       gpt-5.6-sol: default, priority, flex, ultrafast",
        "  tiers        default: 54 tokens/s, first token after 3000 ms",
        "               ultrafast: 750 tokens/s, first token after 200 ms",
        "  time scale   0: every reply at once, same content as at real speed",
        "  state        in memory, in this process (rate windows, capacity and the usage ledger start empty)",
    ):
        assert expected in summary


def test_quiet_leaves_the_summary_out(tmp_path: Path) -> None:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "mockserver", "serve", "--port", str(port), "--quiet", "--log-level", "WARNING"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_health(f"http://127.0.0.1:{port}")
    finally:
        process.terminate()
        out, err = process.communicate(timeout=10)
    assert (out, err) == ("", "")


# -- start-ups that cannot complete ------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def assert_refused(result: subprocess.CompletedProcess[str], message: str) -> None:
    assert (result.returncode, result.stdout, result.stderr) == (2, "", f"mockserver: {message}\n")


def test_a_port_in_use(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_cli("serve", "--port", str(port))
    assert_refused(
        result,
        f"cannot listen on 127.0.0.1:{port}: port {port} is already in use by another program; "
        "stop it, or pass --port 0 (any free port) or another --port",
    )


def test_a_host_that_does_not_resolve() -> None:
    assert_refused(
        run_cli("serve", "--host", "no-such-host.invalid", "--port", "0"),
        "cannot listen on no-such-host.invalid:0: the host name 'no-such-host.invalid' does not resolve; "
        "pass --host 127.0.0.1 (this machine only) or --host 0.0.0.0 (every interface)",
    )


def test_a_yaml_syntax_error_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "my.yaml").write_text("extends: default\nscripts: [oops\n")
    assert_refused(
        run_cli("serve", "--config", "my.yaml", cwd=tmp_path),
        "config file my.yaml: YAML syntax error at line 3, column 1: expected ',' or ']', but got '<stream end>'; "
        "correct the file (`mockserver init` writes a valid one to start from)",
    )


@pytest.mark.parametrize(
    ("args", "env", "shown"),
    [(["--log-level", "verbose"], {}, "verbose"), ([], {"MOCKSERVER_LOG_LEVEL": "Verbose"}, "Verbose")],
)
def test_an_unknown_log_level(args: list[str], env: dict[str, str], shown: str) -> None:
    assert_refused(
        run_cli("serve", "--port", "0", *args, env=env),
        f"log level {shown!r} is not one of critical, error, warning, info, debug, trace "
        "(--log-level or MOCKSERVER_LOG_LEVEL, in any case)",
    )


def test_log_levels_in_any_case(tmp_path: Path) -> None:
    from mockserver.config.settings import Settings

    assert Settings(log_level="DEBUG").log_level == "debug"
    assert Settings.from_env({"MOCKSERVER_LOG_LEVEL": "Warning"}).log_level == "warning"
    assert Settings.from_env({"MOCKSERVER_QUIET": "yes"}).quiet is True


def test_a_malformed_option_is_one_line_too() -> None:
    result = run_cli("serve", "--port", "abc")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "mockserver serve: argument --port: invalid int value: 'abc' (`mockserver serve --help` lists the options)\n"
    )
