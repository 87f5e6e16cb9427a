"""What the prompt cache costs a request, in this process.

    python -m benchmarks prompt_cache [--output PATH]

1. **A short prompt** (most requests): the check that skips it, :func:`mockserver.service.prompt_cache.may_cache`,
   in nanoseconds per call: a comparison with the count the window check made (tool definitions
   included). Nothing else runs for it: no part is cut, nothing is hashed, the store is not called.
2. **A long prompt**: the whole lookup of a Chat Completions request, with its parts cut
   (:func:`mockserver.api.openai.chat.cache_parts.chat_parts`), hashed and looked up and written in the
   in-memory store, for conversations of about 1,300, 20,000 and 100,000 tokens (2, 40 and 200 messages),
   beside what counting the same prompt costs (:func:`mockserver.engine.prompt_count.count_messages`,
   which every request pays already). Measured after the prompt was counted once in the same request
   context, as on the server, where the count comes first.

CPU time (``time.process_time``), the median of several rounds. Figures go to
``benchmarks/results/prompt_cache.json``; ``docs/prompt-caching.md`` quotes them.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from typing import Any

from benchmarks.harness import arguments, results_path, write_results
from mockserver.api.openai.chat.cache_parts import chat_parts
from mockserver.api.openai.schemas import ChatCompletionRequest
from mockserver.config.caching import PromptCaching
from mockserver.engine import prompt_count, tokens
from mockserver.engine.pacing import FakeClock
from mockserver.service import prompt_cache
from mockserver.service.ratelimits import prompt_texts
from mockserver.state.store import MemoryStore

ROUNDS = 7
SHORT_CALLS = 200_000
PROSE = (
    "Clients are tested against the mock before they meet the real API, and each difference hides a bug "
    "until production: a prompt that does not fit, a first token that waits for the prompt, a pool that queues. "
)


def conversation(messages: int, tokens_each: int) -> dict[str, Any]:
    words = PROSE.split()
    turns = []
    for i in range(messages):
        text = " ".join(words[(i + k) % len(words)] for k in range(int(tokens_each * 0.75)))
        turns.append({"role": "user" if i % 2 == 0 else "assistant", "content": f"Turn {i}. {text}"})
    return {"model": "gpt-5.6-sol", "messages": turns}


def short_check() -> float:
    """Nanoseconds per :func:`may_cache` of a 20-token prompt."""
    settings = PromptCaching()
    body: dict[str, Any] = {"model": "gpt-5.6-sol", "messages": [{"role": "user", "content": "Say hi"}]}
    rounds = []
    for _ in range(ROUNDS):
        started = time.process_time()
        for _ in range(SHORT_CALLS):
            prompt_cache.may_cache(settings, 20, body)
        rounds.append((time.process_time() - started) / SHORT_CALLS * 1e9)
    return statistics.median(rounds)


def long_lookup(raw: dict[str, Any]) -> dict[str, Any]:
    body = ChatCompletionRequest.model_validate(raw)
    settings, clock = PromptCaching(), FakeClock()

    async def once(store: MemoryStore) -> tuple[float, float, int]:
        started = time.process_time()
        counted = await prompt_count.count_messages(prompt_texts(raw))
        counting = time.process_time() - started
        started = time.process_time()
        found = await prompt_cache.openai_lookup(
            store, clock.now(), settings, organization="org", model="gpt-5.6-sol",
            parts=lambda: chat_parts(body, raw), time_scale=1.0,
        )  # fmt: skip
        await found.write(store, clock.now())
        return counting, time.process_time() - started, counted.tokens

    counts, lookups = [], []
    prompt = 0
    for _ in range(ROUNDS):
        store = MemoryStore()
        asyncio.run(once(store))  # the first request: a miss, written
        counting, lookup, prompt = asyncio.run(once(store))  # the second: a hit
        counts.append(counting * 1e6)
        lookups.append(lookup * 1e6)
    return {
        "prompt_tokens": prompt,
        "messages": len(raw["messages"]),
        "lookup_us": round(statistics.median(lookups), 1),
        "prompt_count_us": round(statistics.median(counts), 1),
        "lookup_over_count": round(statistics.median(lookups) / statistics.median(counts), 3),
    }


def main() -> None:
    parser = arguments("prompt_cache", __doc__)
    args = parser.parse_args()
    tokens.warm()
    report = {
        "exact_tokenizer": tokens.exact(),
        "short_prompt_check_ns": round(short_check(), 1),
        "long_prompts": [long_lookup(conversation(n, each)) for n, each in ((2, 650), (40, 500), (200, 500))],
        "rounds": ROUNDS,
        "load_average_1m": round(os.getloadavg()[0], 2),
    }
    write_results(results_path("prompt_cache", args), report)
    print(report)


if __name__ == "__main__":
    main()
