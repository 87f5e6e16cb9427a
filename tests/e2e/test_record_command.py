"""``mockserver record`` as a user runs it: its own process, a port file, forwarding and recording."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from mockserver import MockServer
from mockserver.cassettes import files
from tests.conftest import PREVIEW_KEY

START_TIMEOUT_S = 30.0


def test_the_record_command_forwards_and_records(tmp_path: Path) -> None:
    cassette, port_file = tmp_path / "session.jsonl", tmp_path / "port"
    with MockServer(time_scale=0) as upstream:
        proc = subprocess.Popen(
            [sys.executable, "-m", "mockserver", "record", "--upstream", upstream.url, "--cassette", str(cassette),
             "--port", "0", "--port-file", str(port_file)],
            env=os.environ.copy(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while not port_file.exists() or not port_file.read_text():
                assert proc.poll() is None and time.monotonic() < deadline, "record did not start"
                time.sleep(0.05)
            base = f"http://127.0.0.1:{port_file.read_text()}/v1"
            for _ in range(100):
                try:
                    reply = httpx.post(
                        f"{base}/chat/completions",
                        headers={"authorization": f"Bearer {PREVIEW_KEY}"},
                        json={"model": "gpt-5.6-sol", "messages": [{"role": "user", "content": "Hi"}]},
                    )
                    break
                except httpx.ConnectError:
                    time.sleep(0.05)
            assert reply.status_code == 200 and reply.json()["choices"][0]["message"]["content"]
        finally:
            proc.terminate()
            _, err = proc.communicate(timeout=30)
    assert "recording" in err and "recorded 1 exchanges" in err
    [record] = files.load(cassette).records
    assert record.response.body == reply.json() and PREVIEW_KEY not in cassette.read_text()
