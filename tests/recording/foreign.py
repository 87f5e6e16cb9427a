"""A small upstream that is not mockserver: its own ids, headers and SSE framing.

It streams Chat Completions with ``\\r\\n`` line ends, keep-alive comments between events, and
chunk boundaries that cut events in the middle (three events in one write, then one split across
two), so a recording that only fits mockserver's own framing would fail here. It answers a
wrong key with a 401 quoting the key masked, as the real API does.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

FOREIGN_KEY = "sk-foreign-live-0123456789abcdefWXYZ"
WORDS = ["Tide", " pools", " hold", " small", " worlds", " of", " salt", " and", " light", "."]
STEP_S = 0.02
CREATED = 1_700_000_000


class Foreign:
    def __init__(self) -> None:
        self.closed_early = 0  # streams whose client went away before the end
        self.requests: list[dict[str, Any]] = []
        self.app = Starlette(routes=[Route("/v1/chat/completions", self.chat, methods=["POST"])])

    async def chat(self, request: Request) -> Response:
        body = orjson.loads(await request.body())
        self.requests.append({"headers": dict(request.headers), "body": body})
        key = request.headers.get("authorization", "").removeprefix("Bearer ")
        if key != FOREIGN_KEY:
            masked = f"{key[:3]}{'*' * 20}{key[-4:]}"
            return JSONResponse(
                {
                    "error": {
                        "message": f"Incorrect API key provided: {masked}.",
                        "type": "invalid_request_error",
                        "param": None,
                        "code": "invalid_api_key",
                    }
                },
                status_code=401,
                headers={"x-request-id": "req_foreign_denied"},
            )
        words = WORDS * int(body.get("n_repeat", 1))
        headers = {"x-request-id": "req_foreign_1", "x-ratelimit-remaining-requests": "41", "x-foreign": "yes"}
        if not body.get("stream"):
            return JSONResponse(_completion(words), headers=headers)
        return StreamingResponse(self._stream(words), media_type="text/event-stream", headers=headers)

    async def _stream(self, words: list[str]) -> AsyncIterator[bytes]:
        frames = [_frame(_chunk({"role": "assistant", "content": ""}))]
        frames += [_frame(_chunk({"content": w})) for w in words]
        frames += [_frame(_chunk({}, finish="stop")), _frame(_usage(words)), b"data: [DONE]\r\n\r\n"]
        try:
            await asyncio.sleep(STEP_S * 5)  # a TTFT of its own
            yield b"".join(frames[:3]) + b": keep-alive\r\n\r\n"
            rest = frames[3:]
            for frame in rest:
                await asyncio.sleep(STEP_S)
                half = len(frame) // 2
                yield frame[:half]
                yield frame[half:] + b": ping\r\n\r\n"
        except BaseException:
            self.closed_early += 1
            raise


def _frame(payload: dict[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(payload) + b"\r\n\r\n"


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-foreign-7",
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": "foreign-1",
        "system_fingerprint": "fp_foreign",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _usage(words: list[str]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-foreign-7",
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": "foreign-1",
        "choices": [],
        "usage": {"prompt_tokens": 9, "completion_tokens": len(words), "total_tokens": 9 + len(words)},
    }


def _completion(words: list[str]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-foreign-8",
        "object": "chat.completion",
        "created": CREATED,
        "model": "foreign-1",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "".join(words)},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": 9, "completion_tokens": len(words), "total_tokens": 9 + len(words)},
    }
