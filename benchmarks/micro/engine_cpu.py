"""CPU per event of the streaming engine alone: no socket, no HTTP, no other process.

Plays N Chat Completions streams of 1,500 tokens at 750 tokens/s (TTFT 200 ms, the tier's
jitter) through the server's :class:`~mockserver.engine.scheduler.StreamScheduler`, on a
fake clock whose timers fire on whole milliseconds as the event loop's do, into a direct
write that only counts events. What it measures is the engine's own work per event: the
tick, the producer, the text and the deadlines (the socket write, measured by the sweep, comes
on top). Each stream's reply is planned before the clock starts.

The figure is CPU time (``time.process_time``), which other work on a shared machine
disturbs much less than wall time; ``--baseline DIR`` measures another checkout in the same
run, alternating, for before/after.

    python -m benchmarks engine_cpu [--streams 250] [--per-chunk 1] [--baseline DIR] [--output FILE]

Writes ``benchmarks/results/engine_cpu.json``.
"""

from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

from benchmarks.harness import (
    alternate,
    arguments,
    checkouts,
    command_line,
    results_path,
    run_in_checkout,
    write_results,
)

TOKENS = 1500
RATE = 750.0
ROUNDS = 3

# The measurement itself, run in a fresh interpreter per checkout (so each imports its own code).
PROGRAM = r"""
import asyncio, math, random, sys, time
from mockserver.api.openai.chat.completions import ChatChoice, ChatPlan, stream_chunks
from mockserver.engine.generation import TextGenerator
from mockserver.engine.pacing import FakeClock, Pacer, Schedule
from mockserver.engine.scheduler import StreamScheduler

streams, per_chunk, tokens, rate = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])


class TickClock(FakeClock):
    def call_at(self, deadline, callback):  # timers fire on whole milliseconds, as the loop's do
        return super().call_at(max(deadline, math.ceil(deadline * 1000) / 1000), callback)


async def main():
    generator = TextGenerator()
    generator.warm()
    clock = TickClock(start=0.0)
    scheduler = StreamScheduler(clock)
    events = [0]

    def write(body):
        events[0] += body.count(b"\n\n")
        return True

    async def send(message):
        pass

    plans = []
    for i in range(streams):
        schedule = Schedule.build(start=i * 0.0004, ttft=0.2, tokens_per_second=rate, total_tokens=tokens,
                                  jitter=0.2, rng=random.Random(i))
        choice = ChatChoice(0, generator.generate(i, tokens), "stop")
        plan = ChatPlan("chatcmpl-1", 1, "gpt-5.6-sol", "default", "fp_1", 5, (choice,), True, schedule)
        plans.append((plan, schedule))
    cpu = time.process_time()
    opened = [scheduler.open(stream_chunks(plan, Pacer(clock, schedule), per_chunk=per_chunk),
                             send_body=send, send_end=send, write_body=write) for plan, schedule in plans]
    await asyncio.gather(*(stream.done for stream in opened))
    print((time.process_time() - cpu) / events[0] * 1e6, events[0])


asyncio.run(main())
"""


def measure(root: Path, streams: int, per_chunk: int) -> tuple[float, int]:
    out = run_in_checkout(root, PROGRAM, streams, per_chunk, TOKENS, RATE)
    return float(out[0]), int(out[1])


def main() -> int:
    parser = arguments("engine_cpu", __doc__, baseline="also measure mockserver from this checkout")
    parser.add_argument("--streams", type=int, default=250)
    parser.add_argument("--per-chunk", type=int, default=1)
    args = parser.parse_args()
    events = 0

    def per_event(root: Path) -> float:
        nonlocal events
        us, events = measure(root, args.streams, args.per_chunk)
        return us

    runs = alternate(checkouts(args.baseline), ROUNDS, per_event)
    report = {
        "benchmark": "engine_cpu",
        "command": command_line("engine_cpu"),
        "loadavg_1_5_15_after": list(os.getloadavg()),
        "streams": args.streams,
        "tokens_per_chunk": args.per_chunk,
        "tokens_per_stream": TOKENS,
        "events": events,
        "cpu_us_per_event": {name: {"median": statistics.median(v), "runs": v} for name, v in runs.items()},
    }
    if "baseline" in runs:
        report["ours_over_baseline"] = statistics.median(runs["mockserver"]) / statistics.median(runs["baseline"])
    output = write_results(results_path("engine_cpu", args), report, stamp=False)
    for name, v in runs.items():
        print(f"{name}: {statistics.median(v):.2f} us CPU per event (runs {', '.join(f'{x:.2f}' for x in v)})")
    if "ours_over_baseline" in report:
        print(f"mockserver / baseline: {report['ours_over_baseline']:.2f}")
    print(f"figures -> {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
