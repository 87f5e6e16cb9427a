"""Against a real server: a client that stops reading holds up no other stream, and a client that
leaves is dropped from the stream scheduler at once. (Timing checks are loose: this only asserts
that the other stream is not stuck behind the paused one, not how fast it is.)"""

from __future__ import annotations

import json
import socket
import time

import httpx

from mockserver import MockServer

KEY = "sk-mock-preview"
RATE = 10_000  # tokens/s
TOKENS = 30_000  # 3 s per stream: about 6 MB of events, more than the kernel's socket buffers hold


def _request(port: int) -> bytes:
    body = json.dumps({"model": "gpt-5.6-sol", "messages": [{"role": "user", "content": "hi"}], "stream": True})
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nauthorization: Bearer {KEY}\r\nx-mock-tokens-per-second: {RATE}\r\n"
        f"x-mock-ttft-ms: 0\r\nx-mock-output-tokens: {TOKENS}\r\n\r\n"
    )
    return head.encode() + body.encode()


def _wait_for(condition: object, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


def test_a_paused_client_holds_up_no_other_stream_and_a_leaving_one_is_dropped() -> None:
    with MockServer(time_scale=1.0) as server, socket.socket() as paused:
        paused.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a small window fills fast
        paused.connect(("127.0.0.1", server.port))
        paused.sendall(_request(server.port))  # and never read
        assert _wait_for(lambda: len(server.state.streams) == 1, 5)

        headers = {"authorization": f"Bearer {KEY}", "x-mock-tokens-per-second": str(RATE), "x-mock-ttft-ms": "0"}
        headers["x-mock-output-tokens"] = str(TOKENS)
        body = {"model": "gpt-5.6-sol", "messages": [{"role": "user", "content": "hi"}], "stream": True}
        started = time.monotonic()
        with httpx.stream("POST", f"{server.base_url}/chat/completions", json=body, headers=headers) as reply:
            events = [line for line in reply.iter_lines() if line.startswith("data: ")]
        took = time.monotonic() - started
        assert events[-1] == "data: [DONE]" and len(events) >= TOKENS
        assert took < 3.0 + 5.0, f"the reading stream took {took:.1f} s beside a paused one"

        paused_stream = next(iter(server.state.streams.active))
        assert paused_stream.blocked, "the paused client's writes should be held back, not buffered without end"
        paused.close()  # the client leaves: the scheduler drops its stream, and its producer is closed
        assert _wait_for(lambda: len(server.state.streams) == 0, 5)
        assert paused_stream.over
