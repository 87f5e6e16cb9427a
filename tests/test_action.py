"""The GitHub Action (``action.yml``), its steps run in order as a runner runs them: each ``run`` in
bash with the step's ``env`` and ``if`` worked out from the inputs, ``GITHUB_OUTPUT`` and
``GITHUB_ENV`` files, ``GITHUB_ACTION_PATH`` at the repository. Then the URL it outputs answers.

The install step is skipped here (``install: "false"``): the test's environment already has
mockserver, and building a wheel may need the network. It is the one step not run."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.processes import free_port

ROOT = Path(__file__).resolve().parent.parent
ACTION = ROOT / "action.yml"
EXPRESSION = re.compile(r"\$\{\{\s*(.+?)\s*\}\}")
CONDITION = re.compile(r"^inputs\.([\w-]+)\s*==\s*'([^']*)'$")


def action() -> dict[str, Any]:
    loaded = yaml.safe_load(ACTION.read_text())
    assert isinstance(loaded, dict)
    return loaded


def evaluate(expression: str, inputs: dict[str, str], steps: dict[str, dict[str, str]]) -> str:
    """The few expressions the action uses: ``inputs.NAME`` and ``steps.ID.outputs.NAME``."""
    scope, _, rest = expression.partition(".")
    if scope == "inputs":
        return inputs[rest]
    if scope == "steps":
        step, _, output = rest.partition(".outputs.")
        return steps[step][output]
    if expression == "github.action_path":
        return str(ROOT)
    raise AssertionError(f"the test does not know the expression {expression!r}")


def substitute(text: str, inputs: dict[str, str], steps: dict[str, dict[str, str]]) -> str:
    return EXPRESSION.sub(lambda match: evaluate(match.group(1), inputs, steps), text)


def read_pairs(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if line)


def run_action(inputs: dict[str, str], workdir: Path) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """Run every step as a runner would; the action's outputs, the environment it set, and the steps run."""
    spec = action()
    assert spec["runs"]["using"] == "composite"
    given = {name: str(inp.get("default", "")) for name, inp in spec["inputs"].items()}
    unknown = set(inputs) - set(given)
    assert not unknown, f"not inputs of the action: {unknown}"
    given.update(inputs)
    step_outputs: dict[str, dict[str, str]] = {}
    env_file = workdir / "github_env"
    env_file.touch()
    ran = []
    for step in spec["runs"]["steps"]:
        condition = step.get("if")
        if condition:
            match = CONDITION.match(condition)
            assert match, f"the test does not know the condition {condition!r}"
            if given[match.group(1)] != match.group(2):
                continue
        assert step["shell"] == "bash" and "uses" not in step
        output_file = workdir / f"output_{len(ran)}"
        output_file.touch()
        script = workdir / f"step_{len(ran)}.sh"
        script.write_text(substitute(step["run"], given, step_outputs))
        env = {
            **os.environ,
            **read_pairs(env_file),
            **{name: substitute(str(value), given, step_outputs) for name, value in step.get("env", {}).items()},
            "GITHUB_ACTION_PATH": str(ROOT),
            "GITHUB_OUTPUT": str(output_file),
            "GITHUB_ENV": str(env_file),
            "RUNNER_TEMP": str(workdir),
        }
        # The runner's command line for `shell: bash`.
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            env=env,
            cwd=workdir,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, f"step {step.get('name')} failed:\n{done.stdout}\n{done.stderr}"
        if "id" in step:
            step_outputs[step["id"]] = read_pairs(output_file)
        ran.append(step["name"])
    outputs = {name: substitute(out["value"], given, step_outputs) for name, out in spec["outputs"].items()}
    return outputs, read_pairs(env_file), ran


@pytest.fixture
def started(tmp_path: Path) -> Iterator[tuple[dict[str, str], dict[str, str], list[str]]]:
    inputs = {
        "install": "false",
        "python": sys.executable,
        "port": str(free_port()),
        "presets": "claude-opus-4.8-fast",
        "rates": "ultrafast=300:150,default=40",
        "time-scale": "0",
    }
    with _running(inputs, tmp_path) as ran_action:
        yield ran_action


@contextlib.contextmanager
def _running(inputs: dict[str, str], workdir: Path) -> Iterator[tuple[dict[str, str], dict[str, str], list[str]]]:
    """The action run with ``inputs``, and its server stopped afterwards."""
    outputs, env, ran = run_action(inputs, workdir)
    try:
        yield outputs, env, ran
    finally:
        pid = int(env["MOCKSERVER_PID"])
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.05)
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A process that ended but was not reaped (its parent, the step's bash, is gone) is a zombie of init's.
    status = Path(f"/proc/{pid}/stat")
    return not (status.exists() and status.read_text().split(") ", 1)[1].startswith("Z"))


def test_the_action_starts_a_server_whose_url_answers(
    started: tuple[dict[str, str], dict[str, str], list[str]],
) -> None:
    outputs, env, ran = started
    assert ran == ["Start mockserver"]  # the install step is skipped with install: "false"
    base_url, token = outputs["base-url"], outputs["admin-token"]
    assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1") and len(token) >= 24
    assert env["OPENAI_BASE_URL"] == base_url and env["MOCKSERVER_ADMIN_TOKEN"] == token
    assert httpx.get(outputs["url"] + "/ready").status_code == 200
    headers = {"authorization": f"Bearer {env['OPENAI_API_KEY']}"}
    anthropic_headers = {"x-api-key": env["ANTHROPIC_API_KEY"], "anthropic-version": "2023-06-01"}
    models = httpx.get(f"{env['ANTHROPIC_BASE_URL']}/v1/models", headers=anthropic_headers).json()["data"]
    assert "claude-opus-4-8" in {m["id"] for m in models}  # the preset was merged in
    reply = httpx.post(
        f"{base_url}/chat/completions",
        headers=headers,
        json={"model": "gpt-5.6-sol", "messages": [{"role": "user", "content": "Hello"}]},
    )
    assert reply.status_code == 200 and reply.json()["choices"][0]["message"]["content"]
    # The control plane wants the token the action gave out, and answers with it.
    config_url = f"{outputs['url']}/_mock/config"
    assert httpx.get(config_url).status_code == 401
    config = httpx.get(config_url, headers={"authorization": f"Bearer {token}"})
    assert config.status_code == 200
    assert Path(outputs["log"]).exists()


def test_an_admin_token_that_starts_with_a_dash_is_the_servers_token(tmp_path: Path) -> None:
    # A generated token starts with "-" about once in 64 runs: it must reach the server as the token,
    # not be read as an option.
    token = "-starts-with-a-dash-0123456789"
    inputs = {"install": "false", "python": sys.executable, "port": str(free_port()), "admin-token": token}
    with _running(inputs, tmp_path) as (outputs, env, _):
        assert outputs["admin-token"] == token and env["MOCKSERVER_ADMIN_TOKEN"] == token
        config = httpx.get(f"{outputs['url']}/_mock/config", headers={"authorization": f"Bearer {token}"})
        assert config.status_code == 200


def test_the_install_step_installs_the_actions_own_source() -> None:
    (install,) = (step for step in action()["runs"]["steps"] if step["name"] == "Install mockserver")
    assert install["if"] == "inputs.install == 'true'"
    assert "-m pip install" in install["run"] and '"$GITHUB_ACTION_PATH"' in install["run"]
