"""How long the prompt cache holds the event loop at once for a conversation of many messages.

    python benchmarks/prompt_cache_loop.py [--messages N] [--output PATH]

A request of ``N`` one-line messages (50,000 by default) is looked up in the in-memory store as the
server does it, for Chat Completions, the Responses API and Anthropic's Messages API (a breakpoint on
the last message; its conversation is read first, as the server reads it ahead of planning), while
another task counts the loop's turns: the longest wall-clock stretch between two of its turns is how
long the lookup held the loop at once; the CPU time is the whole lookup's. The prompt is not checked
against a context window here (the server refuses one past it first).

Then whole requests of ``--request-messages`` (15,000: about 179,000 tokens, inside every model's
window) go through the server's app in-process, twice per API (the second reads the cache), with the
same other task: the longest stretch of each, parsing the body included, and the longest full
garbage-collection pass during it (a pass holds the loop as long as it lasts).
Figures go to ``benchmarks/results/prompt_cache_loop.json``; ``docs/limits.md`` quotes them.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import RESULTS, write_report

from mockserver.api.anthropic import turns
from mockserver.api.anthropic.cache_parts import message_parts
from mockserver.api.anthropic.schemas import MessagesRequest
from mockserver.api.openai.chat.cache_parts import chat_parts
from mockserver.api.openai.responses.cache_parts import response_parts
from mockserver.api.openai.schemas import ChatCompletionRequest, ResponseCreateRequest
from mockserver.config.caching import PromptCaching
from mockserver.engine import tokens
from mockserver.service import prompt_cache
from mockserver.state.store import MemoryStore

MESSAGES = 50_000
REQUEST_MESSAGES = 15_000
KEY = "sk-mock-preview"


async def held(lookup: Callable[[], Awaitable[Any]]) -> dict[str, float]:
    """The longest stretch (ms) without a turn of the loop while ``lookup`` runs, and its CPU time (ms)."""
    worst, done = 0.0, False

    async def other_task() -> None:
        nonlocal worst
        while not done:
            started = time.perf_counter()
            await asyncio.sleep(0)
            worst = max(worst, time.perf_counter() - started)

    running = asyncio.create_task(other_task())
    await asyncio.sleep(0)
    started = time.process_time()
    await lookup()
    cpu = time.process_time() - started
    done = True
    await running
    return {"longest_stretch_ms": round(worst * 1000, 1), "cpu_ms": round(cpu * 1000, 1)}


def measure(n: int) -> dict[str, Any]:
    lines = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"Line {i} of the log."} for i in range(n)]
    chat_raw = {"model": "gpt-5.6-sol", "messages": lines}
    chat = ChatCompletionRequest.model_validate(chat_raw)
    responses_raw = {"model": "gpt-5.6-sol", "input": lines}
    responses = ResponseCreateRequest.model_validate(responses_raw)
    last = {"type": "text", "text": "Sum it up.", "cache_control": {"type": "ephemeral"}}
    marked = [*lines[:-1], {"role": "user", "content": [last]}]
    messages = MessagesRequest.model_validate({"model": "claude-opus-4-8", "max_tokens": 8, "messages": marked})
    settings = PromptCaching()

    def openai(parts: Callable[[], Any]) -> Callable[[], Awaitable[Any]]:
        return lambda: prompt_cache.openai_lookup(
            MemoryStore(), 0.0, settings, organization="org", model="gpt-5.6-sol", parts=parts, time_scale=1.0
        )

    async def anthropic() -> Any:  # the conversation is read first (for the planner too), then cut
        reading = await turns.read_ahead(messages.system, messages.messages)
        return await prompt_cache.anthropic_lookup(
            MemoryStore(), 0.0, settings, workspace="org/proj", model="claude-opus-4-8",
            parts=lambda: message_parts(messages, reading), min_tokens=1024, time_scale=1.0,
        )  # fmt: skip

    return {
        "chat_completions": asyncio.run(held(openai(lambda: chat_parts(chat, chat_raw)))),
        "responses": asyncio.run(held(openai(lambda: response_parts(responses, responses_raw, None)))),
        "anthropic_messages": asyncio.run(held(anthropic)),
    }


def requests(n: int) -> dict[str, Any]:
    """The longest stretch and CPU time of whole requests of ``n`` messages, per API, through the app."""
    import httpx

    from mockserver.config.settings import Settings
    from mockserver.server.app import create_app

    lines = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"Line {i} of the log."} for i in range(n)]
    last = {"type": "text", "text": "Sum it up.", "cache_control": {"type": "ephemeral"}}
    sent = {
        "chat_completions": ("/v1/chat/completions", {"model": "gpt-5.6-sol", "messages": lines}),
        "responses": ("/v1/responses", {"model": "gpt-5.6-sol", "input": lines}),
        "anthropic_messages": ("/v1/messages", {"model": "claude-opus-4-8", "max_tokens": 8,
                                                "messages": [*lines[:-1], {"role": "user", "content": [last]}]}),
    }  # fmt: skip
    headers = {"authorization": f"Bearer {KEY}", "x-api-key": KEY, "anthropic-version": "2023-06-01"}
    app = create_app(Settings(time_scale=0, presets=["openai", "claude-opus-4.8-fast"]))

    passes: list[float] = []  # the full garbage collections' durations (ms): a pass holds the loop too
    started: list[float] = [0.0]

    def timed_pass(phase: str, info: dict[str, Any]) -> None:
        if info["generation"] == 2:
            if phase == "start":
                started[0] = time.perf_counter()
            else:
                passes.append((time.perf_counter() - started[0]) * 1000)

    gc.callbacks.append(timed_pass)

    async def run() -> dict[str, Any]:
        report: dict[str, Any] = {}
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app), base_url="http://mock", headers=headers, timeout=60
            ) as client,
        ):
            for api, (path, body) in sent.items():
                rounds = []
                for _ in range(2):
                    answered: list[int] = []

                    async def post(path: str = path, body: Any = body, answered: list[int] = answered) -> None:
                        answered.append((await client.post(path, json=body)).status_code)

                    passes.clear()
                    rounds.append({**await held(post), "longest_gc_pass_ms": round(max(passes, default=0.0), 1)})
                    assert answered == [200], answered
                report[api] = rounds
        return report

    return asyncio.run(run())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=MESSAGES)
    parser.add_argument("--request-messages", type=int, default=REQUEST_MESSAGES)
    parser.add_argument("--output", type=Path, default=RESULTS / "prompt_cache_loop.json")
    args = parser.parse_args()
    tokens.warm()
    measure(1_000)  # warm up
    report = {"messages": args.messages, "load_average": os.getloadavg()[0], **measure(args.messages)}
    report["requests"] = {"messages": args.request_messages, **requests(args.request_messages)}
    write_report(args.output, report)
    print(report)


if __name__ == "__main__":
    main()
