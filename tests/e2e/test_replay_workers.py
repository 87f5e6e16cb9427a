"""Replay with ``serve --workers 2 --state redis://...``: identical requests take their recordings in one
order across the workers, because the order lives in the shared store."""

from __future__ import annotations

from pathlib import Path

import httpx

from mockserver import MockServer
from mockserver.testing.recorder import RecordingProxy
from tests.conftest import PREVIEW_KEY
from tests.processes import ServerProcess
from tests.redis_server import RedisServer

BODY = {"model": "gpt-5.6-sol", "messages": [{"role": "user", "content": "A haiku, please."}], "max_tokens": 20}
HEADERS = {"authorization": f"Bearer {PREVIEW_KEY}"}


def test_two_workers_share_one_replay_order(redis_server: RedisServer, tmp_path: Path) -> None:
    cassette = tmp_path / "twice.jsonl"
    recorded = []
    with MockServer(time_scale=0) as upstream, RecordingProxy(upstream.url, cassette) as proxy:
        for seed in range(4):  # four replies to requests that differ only by their seed
            reply = httpx.post(f"{proxy.base_url}/chat/completions", json={**BODY, "seed": seed}, headers=HEADERS)
            recorded.append(reply.json()["choices"][0]["message"]["content"])
    assert len(set(recorded)) == 4
    config = tmp_path / "ignore-seed.yaml"
    config.write_text("extends: default\nreplay_ignore: [seed]\n")  # the four become one key, in order
    args = ("--workers", "2", "--state", redis_server.url, "--replay", str(cassette), "--config", str(config),
            "--time-scale", "0")  # fmt: skip
    with ServerProcess(*args) as workers:
        answers = []
        for _ in range(4):  # a new connection each time: any worker may answer
            with httpx.Client(limits=httpx.Limits(max_keepalive_connections=0)) as client:
                reply = client.post(f"{workers.base_url}/chat/completions", json=BODY, headers=HEADERS)
                answers.append(reply.json()["choices"][0]["message"]["content"])
    assert answers == recorded
