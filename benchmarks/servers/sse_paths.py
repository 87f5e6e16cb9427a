"""The servers of ``python -m benchmarks sse_encoding``: one Chat Completions stream path each, on the same events.

    python benchmarks/servers/sse_paths.py ours|sse-starlette|sse-starlette-scheduled PORT

Every variant plays the same producer, the server's own ``stream_chunks`` on a deadline schedule
(750 tokens/s, TTFT 0, one token per event, 1,500 tokens unless the body's ``max_completion_tokens``
says otherwise), under uvicorn with uvloop and httptools, as ``mockserver serve`` runs. Only what
carries the events to the socket differs:

- ``ours``: :class:`~mockserver.api.sse.EventStreamResponse`: one scheduler for every
  stream, one timer, events written straight to uvicorn's transport;
- ``sse-starlette``: sse-starlette's ``EventSourceResponse`` over the same producer played by
  :func:`play`: a task per stream, each sleeping until its next
  deadline (sse-starlette's own design);
- ``sse-starlette-scheduled``: ``EventSourceResponse`` fed by the one scheduler through a queue per
  stream: sse-starlette keeping the one-scheduler design.

No admission, journal or middleware beyond what the path itself needs, so the figures compare the
stream paths alone.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any

import orjson
import uvicorn
from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from mockserver.api.asgi.app_patches import expose_connection_closer
from mockserver.api.openai.chat.completions import ChatChoice, ChatPlan, stream_chunks
from mockserver.api.sse import EventStreamResponse
from mockserver.engine.generation import TextGenerator
from mockserver.engine.pacing import MonotonicClock, Pacer, Schedule
from mockserver.engine.scheduler import StreamScheduler
from mockserver.engine.streaming import Item, Run, closing_items

RATE = 750.0
TOKENS = 1500

clock = MonotonicClock()
generator = TextGenerator()
numbers = itertools.count()
schedulers: list[StreamScheduler] = []


def scheduler() -> StreamScheduler:
    if not schedulers:  # made on the server's loop, at the first request
        schedulers.append(StreamScheduler(clock))
    return schedulers[0]


def events(tokens: int) -> Any:
    """One reply's events: the server's own producer on a deadline schedule starting now."""
    n = next(numbers)
    schedule = Schedule.build(start=clock.now(), ttft=0.0, tokens_per_second=RATE, total_tokens=tokens)
    choice = ChatChoice(0, generator.generate(n, tokens), "stop")
    plan = ChatPlan(f"chatcmpl-{n}", 1, "gpt-5.6-sol", "default", "fp_1", 5, (choice,), False, schedule)
    return stream_chunks(plan, Pacer(clock, schedule), per_chunk=1)


async def play(items: Iterator[Item], clock: MonotonicClock) -> AsyncIterator[bytes]:
    """One stream's events, each when it falls due on ``clock``: a task per stream, sleeping until each deadline."""
    with closing_items(items):
        for item in items:
            if isinstance(item, float):
                await clock.sleep_until(item)
            elif isinstance(item, Run):
                for due, frame in zip(item.dues, item.frames, strict=True):
                    await clock.sleep_until(due)
                    yield frame
            elif isinstance(item, bytes):
                yield item


async def tokens_asked(request: Request) -> int:
    body = orjson.loads(await request.body() or b"{}")
    return int(body.get("max_completion_tokens") or TOKENS)


async def ours(request: Request) -> Response:
    return EventStreamResponse(events(await tokens_asked(request)), scheduler())


async def sse_starlette(request: Request) -> Response:
    return EventSourceResponse(play(events(await tokens_asked(request)), clock), ping=0)


async def sse_starlette_scheduled(request: Request) -> Response:
    queue: asyncio.Queue[bytes | None] = asyncio.Queue()

    def write(body: bytes) -> bool:
        queue.put_nowait(body)
        return True

    async def send_body(message: Any) -> None:
        queue.put_nowait(message["body"])

    async def send_end(message: Any) -> None:
        if message.get("body"):
            queue.put_nowait(message["body"])
        queue.put_nowait(None)

    stream = scheduler().open(
        events(await tokens_asked(request)), send_body=send_body, send_end=send_end, write_body=write
    )

    async def frames() -> AsyncIterator[bytes]:
        try:
            while (frame := await queue.get()) is not None:
                yield frame
        finally:
            scheduler().cancel(stream)

    return EventSourceResponse(frames(), ping=0)


PATHS = {"ours": ours, "sse-starlette": sse_starlette, "sse-starlette-scheduled": sse_starlette_scheduled}


def main() -> None:
    variant, port = sys.argv[1], int(sys.argv[2])
    generator.warm()
    random.seed(0)
    app = Starlette(routes=[Route("/v1/chat/completions", PATHS[variant], methods=["POST"])])
    expose_connection_closer(app)  # the server's send and direct write, as create_app does
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", loop="uvloop", http="httptools")


if __name__ == "__main__":
    main()
