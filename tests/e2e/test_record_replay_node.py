"""Record then replay with the official Node SDKs (``openai``, ``@anthropic-ai/sdk``): the same session twice.

The first run goes through the recording proxy to a ``mockserver serve`` upstream; the second runs
against a server that knows only the cassette. Chat streamed and not, a Responses stream with a
tool-call round trip and a Messages stream with thinking must come out the same.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mockserver import MockServer
from mockserver.testing.recorder import RecordingProxy
from tests.conftest import PREVIEW_KEY
from tests.support import node_dir

NODE_DIR = node_dir()
NODE_TIMEOUT_S = 90


def _session(base: str, script: str = "record_replay.mjs", **extra: str) -> dict[str, Any]:
    node = shutil.which("node")
    assert node is not None
    env = {**os.environ, "OPENAI_BASE_URL": f"{base}/v1", "OPENAI_API_KEY": PREVIEW_KEY,
           "ANTHROPIC_BASE_URL": base, "ANTHROPIC_API_KEY": PREVIEW_KEY, **extra}  # fmt: skip
    done = subprocess.run([node, script], cwd=NODE_DIR, env=env, capture_output=True, text=True,
                          timeout=NODE_TIMEOUT_S, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.fixture
def node_sdks() -> None:
    installed = all((NODE_DIR / "node_modules" / p).is_dir() for p in ("openai", "@anthropic-ai/sdk"))
    if shutil.which("node") is None or not installed:
        reason = "node is not installed" if shutil.which("node") is None else "run `npm ci --prefix tests/node` first"
        if os.environ.get("CI") == "true":
            pytest.fail(f"Node SDK tests cannot run on CI: {reason}")
        pytest.skip(reason)


@pytest.mark.usefixtures("node_sdks")
def test_node_sdks_record_then_replay(tmp_path: Path) -> None:
    cassette = tmp_path / "node.jsonl"
    with MockServer(time_scale=0, seed=8, presets=["claude-opus-4.8-fast"]) as upstream, RecordingProxy(
        upstream.url, cassette
    ) as proxy:  # fmt: skip
        recorded = _session(proxy.url)
    with MockServer(time_scale=0, replay=[str(cassette)], presets=["claude-opus-4.8-fast"], seed=99) as server:
        replayed = _session(server.url)
    assert replayed == recorded
    assert recorded["messages"]["content"][0]["type"] == "thinking"  # type: ignore[index]


@pytest.mark.usefixtures("node_sdks")
@pytest.mark.parametrize(("recorded_as", "replayed_as"), [("whole", "stream"), ("stream", "whole")])
def test_node_sdks_get_a_recording_in_the_other_shape(tmp_path: Path, recorded_as: str, replayed_as: str) -> None:
    cassette = tmp_path / "shapes.jsonl"
    with MockServer(time_scale=0, seed=8, presets=["claude-opus-4.8-fast"]) as upstream, RecordingProxy(
        upstream.url, cassette
    ) as proxy:  # fmt: skip
        recorded = _session(proxy.url, "replay_shapes.mjs", SHAPE=recorded_as)
    with MockServer(time_scale=0, replay=[str(cassette)], presets=["claude-opus-4.8-fast"], seed=99) as server:
        replayed = _session(server.url, "replay_shapes.mjs", SHAPE=replayed_as)
    assert replayed == recorded
    assert [item["type"] for item in recorded["answer"]["output"]] == ["reasoning", "message"]
    assert recorded["call"]["output"][-1]["type"] == "function_call"
    assert [block["type"] for block in recorded["thought"]["content"]] == ["thinking", "text"]
    assert recorded["tool"]["content"][-1]["type"] == "tool_use"
