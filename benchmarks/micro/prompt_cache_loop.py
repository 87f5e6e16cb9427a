"""How long the prompt cache holds the event loop at once for a conversation of many messages.

    python -m benchmarks prompt_cache_loop [--messages N] [--output PATH]

A request of ``N`` one-line messages (50,000 by default) is looked up in the in-memory store as the
server does it, for Chat Completions, the Responses API and Anthropic's Messages API (a breakpoint on
the last message; its conversation is read first, as the server reads it ahead of planning), while
another task counts the loop's turns: the longest wall-clock stretch between two of its turns is how
long the lookup held the loop at once; the CPU time is the whole lookup's. The prompt is not checked
against a context window here (the server refuses one past it first).

What whole requests of many messages do to the streams a server paces is measured by
``python -m benchmarks big_bodies``, against a real server.
Figures go to ``benchmarks/results/prompt_cache_loop.json``; ``docs/limits.md`` quotes them.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

from benchmarks.harness import arguments, results_path, write_results
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


def main() -> None:
    parser = arguments("prompt_cache_loop", __doc__)
    parser.add_argument("--messages", type=int, default=MESSAGES)
    args = parser.parse_args()
    tokens.warm()
    measure(1_000)  # warm up
    report = {"messages": args.messages, "load_average": os.getloadavg()[0], **measure(args.messages)}
    write_results(results_path("prompt_cache_loop", args), report)
    print(report)


if __name__ == "__main__":
    main()
