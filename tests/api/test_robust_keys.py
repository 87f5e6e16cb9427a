"""API keys never appear in full: not in the access log, not in any journal field, whatever the headers."""

from __future__ import annotations

import logging

import httpx

from mockserver import MockServer
from mockserver.server.app import create_app

KEY = "sk-mock-preview"


class Captured(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def test_the_access_log_masks_keys_in_query_strings() -> None:
    create_app()
    access = logging.getLogger("uvicorn.access")
    captured = Captured()
    access.addHandler(captured)
    old_level = access.level
    access.setLevel(logging.INFO)
    try:
        for path in (f"/_mock/usage?key={KEY}", "/_mock/usage?api_key=secret-value-123&x=1", f"/v1/x?token={KEY}"):
            access.info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5000", "GET", path, "1.1", 200)
    finally:
        access.removeHandler(captured)
        access.setLevel(old_level)
    text = "\n".join(captured.lines)
    assert KEY not in text and "secret-value-123" not in text, text
    assert "/_mock/usage?key=sk-moc" in text and "x=1" in text


def test_journal_path_model_and_test_id_are_masked(server: MockServer) -> None:
    server.reset()
    headers = {"authorization": f"Bearer {KEY}", "x-mock-test-id": f"leak-{KEY}"}
    with httpx.Client(base_url=server.url, headers=headers) as http:
        http.post(f"/v1/chat/completions?k={KEY}", json={"model": KEY, "messages": [{"role": "user", "content": "x"}]})
        http.post(f"/v1/{KEY}/chat", json={})
        entries = http.get("/_mock/requests", params={"test_id": f"leak-{KEY}"}).json()["data"]
    assert len(entries) == 2
    raw = httpx.get(f"{server.url}/_mock/requests").text
    assert KEY not in raw, raw


def test_the_journal_and_the_route_read_the_same_authorization_header(server: MockServer) -> None:
    server.reset()
    body = {"model": "gpt-5.6-mini", "messages": [{"role": "user", "content": "x"}]}
    headers = [("authorization", f"Bearer {KEY}"), ("authorization", "Bearer sk-mock-standard")]
    reply = httpx.post(f"{server.url}/v1/chat/completions", json=body, headers=headers)
    assert reply.status_code == 200
    (entry,) = httpx.get(f"{server.url}/_mock/requests").json()["data"]
    assert entry["project"] == reply.headers["openai-project"]
    assert entry["key"] == "sk-moc*****view"
    assert entry["headers"]["authorization"] == "Bearer sk-moc*****view"
