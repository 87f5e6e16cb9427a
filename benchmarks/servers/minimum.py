"""The least an OpenAI-compatible streaming endpoint does before its stream opens, under uvicorn.

The uvicorn floor (``uvicorn_floor.py``) reads nothing of a request. A server that answers
``POST /v1/chat/completions`` as the live API does must at least, before the reply's head goes out:

- answer only ``POST /v1/chat/completions`` (a 404 otherwise);
- look the bearer key up (a 401 for a key it does not know);
- read the body and parse it as JSON (orjson, as mockserver does);
- validate it strictly against the Chat Completions request as OpenAI's API reference defines it
  (``chat_request.py``: its own pydantic model, not mockserver's, so that the cost is what any
  server pays to read this request);
- look the model up among the built-in fixture's (a 404 for one it does not know);
- send the head with the headers the live API sends on a stream: ``x-request-id``,
  ``openai-organization``, ``openai-project``, ``openai-version``, ``openai-processing-ms``, the six
  ``x-ratelimit-*`` headers (with fixed values: no window is kept), and the event-stream ones.

This server does that and nothing else: no accounts beyond the key, no entitlements, capacity or
rate-limit windows, no prompt count, no plan, no journal or metrics; a refusal is a bare error body,
and a body that does not validate a 500. Then it paces the stream exactly as the uvicorn floor does
(pre-encoded events on the same deadlines, which are not OpenAI-shaped chunks: the cost of a whole
stream from this server is not an OpenAI-compatible stream's). What it costs over the uvicorn floor is the
price of those steps; set beside mockserver in ``python -m benchmarks sweep``'s TTFT-0 cells and in
``python -m benchmarks http_servers``, it shows how much of a request's cost any server on this stack pays.

Usage: python benchmarks/servers/minimum.py PORT   (it puts the repository on ``sys.path`` itself, for the schema
and the fixture).
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import uvicorn
from chat_request import ChatRequest
from uvicorn_floor import lifespan, pace

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mockserver.config.fixture import load_fixture

Message = dict[str, Any]

VALIDATE = ChatRequest.__pydantic_validator__.validate_python
KEYS = {b"Bearer sk-mock-preview": (b"org-mock-preview", b"proj_mock_preview")}  # the built-in fixture's key
MODELS = frozenset(model.id for model in load_fixture().models)
PATH = "/v1/chat/completions"
_draw = random.Random(0).getrandbits


def head(organization: bytes, project: bytes, started: float) -> list[tuple[bytes, bytes]]:
    return [
        (b"cache-control", b"no-cache"),
        (b"x-accel-buffering", b"no"),
        (b"content-type", b"text/event-stream; charset=utf-8"),
        (b"x-request-id", b"req_%032x" % _draw(128)),
        (b"openai-version", b"2020-10-01"),
        (b"openai-processing-ms", b"%d" % ((time.monotonic() - started) * 1000)),
        (b"openai-organization", organization),
        (b"openai-project", project),
        (b"x-ratelimit-limit-requests", b"10000"),
        (b"x-ratelimit-limit-tokens", b"30000000"),
        (b"x-ratelimit-remaining-requests", b"9999"),
        (b"x-ratelimit-remaining-tokens", b"29999832"),
        (b"x-ratelimit-reset-requests", b"6ms"),
        (b"x-ratelimit-reset-tokens", b"1ms"),
    ]


async def app(scope: Message, receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
        return
    start = time.monotonic()
    parts = []
    while True:
        message = await receive()
        parts.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    headers = scope["headers"]
    if scope["method"] != "POST" or scope["path"] != PATH:
        await refuse(send, 404, b"not_found")
        return
    account = KEYS.get(next((value for name, value in headers if name == b"authorization"), b""))
    if account is None:
        await refuse(send, 401, b"invalid_api_key")
        return
    request = VALIDATE(orjson.loads(b"".join(parts)), strict=True)
    if request.model not in MODELS:
        await refuse(send, 404, b"model_not_found")
        return
    await send({"type": "http.response.start", "status": 200, "headers": head(*account, start)})
    await pace(headers, start, send)


async def refuse(send: Any, status: int, code: bytes) -> None:
    body = b'{"error":{"message":"refused","type":"invalid_request_error","param":null,"code":"%b"}}' % code
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": body})


if __name__ == "__main__":
    # The same server options as `mockserver serve` and the uvicorn floor.
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), loop="uvloop", http="httptools", log_level="warning")
