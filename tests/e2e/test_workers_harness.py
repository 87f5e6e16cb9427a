"""The harness is one across two workers and across two server processes on one Redis: a ``once`` fault
fires once, a scripted sequence advances once, and a response stored through one process is retrieved,
continued and deleted through the other."""

from __future__ import annotations

from tests.conftest import PREVIEW_KEY
from tests.e2e.test_workers import Cluster, chat, cluster, running

__all__ = ["cluster", "running"]  # the set-ups of tests/test_workers.py, started once for this module too

AUTH = {"authorization": f"Bearer {PREVIEW_KEY}"}


def test_a_once_fault_fires_once_across_both(cluster: Cluster) -> None:
    one, two = cluster.connect()
    fault = {**AUTH, "x-mock-fault": "once status=503", "x-mock-test-id": "workers-fault"}
    body = {"model": "gpt-5.6-mini", "messages": [{"role": "user", "content": "Hi"}]}
    statuses = [client.post("/v1/chat/completions", json=body, headers=fault).status_code for client in (one, two) * 3]
    assert statuses == [503, 200, 200, 200, 200, 200]


def test_a_sequence_advances_once_across_both(cluster: Cluster) -> None:
    one, two = cluster.connect()
    steps = [{"text": "one"}, {"text": "two"}, {"text": "three"}]
    assert one.patch("/_mock/config", json={"scripts": [{"reply": {"sequence": steps}}]}).status_code == 200
    replies = [chat(client).json()["choices"][0]["message"]["content"] for client in (two, one, two, one)]
    assert replies == ["one", "two", "three", "three"]


def test_a_response_stored_through_one_is_used_through_the_other(cluster: Cluster) -> None:
    one, two = cluster.connect()
    body = {"model": "gpt-5.6-sol", "input": "What is the capital of France?"}
    first = one.post("/v1/responses", json=body, headers=AUTH).json()
    assert two.get(f"/v1/responses/{first['id']}", headers=AUTH).json()["id"] == first["id"]
    follow = two.post("/v1/responses", json={**body, "previous_response_id": first["id"]}, headers=AUTH).json()
    assert follow["usage"]["input_tokens"] > first["usage"]["input_tokens"]
    assert one.delete(f"/v1/responses/{first['id']}", headers=AUTH).json()["deleted"] is True
    gone = two.get(f"/v1/responses/{first['id']}", headers=AUTH)
    assert gone.status_code == 404 and gone.json()["error"]["message"] == f"Response with id '{first['id']}' not found."
