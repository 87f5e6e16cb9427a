"""Node SDK compatibility: runs ``node --test`` in tests/node against a live server.

Locally the test is skipped when ``npm ci --prefix tests/node`` has not been run; on CI
(``CI=true``) a missing install is a failure, so the check can't silently vanish.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from mockserver import MockServer
from tests.conftest import PREVIEW_KEY
from tests.support import node_dir

NODE_DIR = node_dir()
NODE_TIMEOUT_S = 90


def test_node_sdk() -> None:
    node = shutil.which("node")
    installed = all((NODE_DIR / "node_modules" / package).is_dir() for package in ("openai", "@anthropic-ai/sdk"))
    if node is None or not installed:
        reason = "node is not installed" if node is None else "run `npm ci --prefix tests/node` first"
        if os.environ.get("CI") == "true":
            pytest.fail(f"Node SDK tests cannot run on CI: {reason}")
        pytest.skip(reason)
    # The Claude preset adds models to the Anthropic API only: the OpenAI model list is unchanged.
    with MockServer(time_scale=0, seed=3, presets=["claude-opus-4.8-fast"]) as server:
        env = {
            **os.environ,
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": PREVIEW_KEY,
            "ANTHROPIC_BASE_URL": server.url,
            "ANTHROPIC_API_KEY": PREVIEW_KEY,
        }
        result = subprocess.run(
            [node, "--test", "--test-reporter=spec", *sorted(p.name for p in NODE_DIR.glob("*.test.mjs"))],
            cwd=NODE_DIR,
            env=env,
            capture_output=True,
            text=True,
            timeout=NODE_TIMEOUT_S,
            check=False,
        )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
