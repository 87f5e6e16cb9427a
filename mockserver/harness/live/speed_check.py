"""The speed check: the announcement's own measurement, run by the server against itself.

One streamed Chat Completions request per tier of the model with Ultrafast (``gpt-5.6-sol`` in the
built-in fixture), all at once, each from a key entitled to that tier, over real HTTP to the
server's own address, as a client would send them. For each, the client's side of the figures:
the time to the first token, the tokens received so far, and at the end
``usage.output_tokens`` divided by the wall time, both of the generation (first token to last,
the tier's rate) and of the whole call (TTFT included, the announcement's figure, which a long
TTFT lowers on a short answer).

Each request asks for about :data:`GENERATION_S` seconds of output at the tier's rate, so the
check takes about that long plus the slowest TTFT. One check runs at a time per process.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from mockserver.config.fixture import Fixture
from mockserver.harness.journal import TEST_ID_HEADER

if TYPE_CHECKING:
    import httpx

GENERATION_S = 5.0  # each request asks for this many seconds of output at its tier's rate
PROMPT = "Write a long story"
TEST_ID = "speed-check"  # the journal tags the check's requests with this test id
TIMEOUT_S = 120.0
TIERS = ("default", "priority", "flex", "ultrafast")


@dataclass
class TierRun:
    """One tier's request, as its client sees it. Times are seconds on the check's clock."""

    tier: str
    key: str
    target: float  # the tier's rate in the fixture, tokens/s
    max_tokens: int
    status: str = "waiting"  # waiting, running, done, failed
    started: float | None = None
    first: float | None = None
    last: float | None = None
    ended: float | None = None
    received: int = 0  # content chunks received
    output_tokens: int | None = None  # usage.output_tokens, once the last chunk came
    error: str | None = None

    def shown(self, now: float) -> dict[str, Any]:
        rate = whole = live = ttft = None
        if self.first is not None and self.started is not None:
            ttft = round(1000 * (self.first - self.started))
        if self.output_tokens is not None and self.first is not None and self.last is not None:
            if self.last > self.first:
                rate = round(self.output_tokens / (self.last - self.first), 2)
            if self.ended is not None and self.started is not None and self.ended > self.started:
                whole = round(self.output_tokens / (self.ended - self.started), 2)
        elif self.first is not None and self.received > 1 and now > self.first:
            live = round((self.received - 1) / (now - self.first), 2)
        return {
            "tier": self.tier,
            "target": self.target,
            "status": self.status,
            "ttft_ms": ttft,
            "received": self.received,
            "output_tokens": self.output_tokens,
            "rate": rate,  # usage.output_tokens / (last token - first token)
            "whole_call_rate": whole,  # usage.output_tokens / the whole call's wall time
            "live_rate": live,  # while it runs: chunks received / time since the first
            "error": self.error,
        }


@dataclass
class SpeedCheck:
    """The check in progress (or the last one), shown by the dashboard."""

    clock: Callable[[], float]
    wall_clock: Callable[[], float]
    runs: list[TierRun] = field(default_factory=list)
    model: str | None = None
    task: asyncio.Task[None] | None = None
    started_at: float = 0.0  # wall time the last check started: the newest of several processes' is shown

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    def shown(self) -> dict[str, Any] | None:
        if not self.runs:
            return None
        now = self.clock()
        runs = [r.shown(now) for r in self.runs]
        return {"started_at": self.started_at, "model": self.model, "running": self.running, "runs": runs}

    def start(self, fixture: Fixture, base_url: str, time_scale: float) -> bool:
        """Start a check against ``base_url``; False if one is running already or nothing can be checked."""
        if self.running:
            return False
        model, runs = plan(fixture, time_scale)
        if not runs:
            return False
        self.model, self.runs = model, runs
        self.started_at = self.wall_clock()
        self.task = asyncio.ensure_future(self._run(base_url))
        return True

    async def _run(self, base_url: str) -> None:
        import httpx  # only for a speed check: the server never loads an HTTP client otherwise

        async with httpx.AsyncClient(base_url=base_url, timeout=TIMEOUT_S) as client:
            await asyncio.gather(*(self._one(client, run) for run in self.runs))

    async def _one(self, client: httpx.AsyncClient, run: TierRun) -> None:
        body = {
            "model": self.model,
            "messages": [{"role": "user", "content": PROMPT}],
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_completion_tokens": run.max_tokens,
            "service_tier": run.tier,
        }
        headers = {"authorization": f"Bearer {run.key}", TEST_ID_HEADER: TEST_ID}
        run.status, run.started = "running", self.clock()
        import httpx

        try:
            async with client.stream("POST", "/v1/chat/completions", json=body, headers=headers) as reply:
                if reply.status_code != 200:
                    run.status, run.error = "failed", f"HTTP {reply.status_code}: {(await reply.aread())[:300]!r}"
                    return
                async for line in reply.aiter_lines():
                    self._read(run, line)
            run.ended = self.clock()
            run.status = "done" if run.output_tokens is not None else "failed"
            if run.output_tokens is None:
                run.error = "the stream ended without usage"
        except (httpx.HTTPError, ValueError) as exc:
            run.status, run.error = "failed", str(exc) or type(exc).__name__

    def _read(self, run: TierRun, line: str) -> None:
        if not line.startswith("data: ") or line == "data: [DONE]":
            return
        chunk = orjson.loads(line[6:])
        for choice in chunk.get("choices") or ():
            if (choice.get("delta") or {}).get("content"):
                now = self.clock()
                if run.first is None:
                    run.first = now
                run.last = now
                run.received += 1
        usage = chunk.get("usage")
        if usage:
            run.output_tokens = int(usage["completion_tokens"])


def plan(fixture: Fixture, time_scale: float) -> tuple[str | None, list[TierRun]]:
    """The model to check (the first that offers Ultrafast, else the first), and one run per tier it
    offers that some active key is entitled to."""
    models = [m for m in fixture.models if m.api == "openai" and m.forced_tier is None]
    if not models:
        return None, []
    model = next((m for m in models if "ultrafast" in m.tiers), models[0])
    runs = []
    for tier in TIERS:
        if tier not in model.tiers:
            continue
        account = next(
            (
                a
                for a in fixture.accounts
                if a.status == "active" and tier in a.tiers and (a.models is None or model.id in a.models)
            ),
            None,
        )
        if account is None:
            continue
        rate = fixture.profile(model, tier).tokens_per_second
        wall_rate = rate / time_scale if time_scale > 0 else rate  # what a client's clock sees
        tokens = max(16, round(wall_rate * GENERATION_S))
        runs.append(TierRun(tier=tier, key=account.key, target=wall_rate, max_tokens=tokens))
    return model.id, runs
