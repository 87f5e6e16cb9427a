"""How long a full garbage collection stops the server, with start-up's objects in the collector's
sight and frozen out of it (``mockserver.api.asgi.collector.settle_heap``).

In a fresh interpreter: the app as ``mockserver serve`` builds it (``create_app``, the text
generator warmed), plus 250 streams' worth of live request objects (each a 1,500-token reply's
text and a run of 64 chunk dicts); then the wall time of ``gc.collect()`` (a full collection, during which no stream
is written), ``--rounds`` times; then the same after ``gc.freeze()`` has taken start-up's objects
out of sight, with as many request objects made afterwards. Medians.

    python -m benchmarks gc_pauses [--rounds 7] [--output FILE]

Writes ``benchmarks/results/gc_pauses.json``.
"""

from __future__ import annotations

import gc
import os
import statistics
import time

from benchmarks.harness import arguments, command_line, results_path, write_results
from mockserver.config.settings import Settings
from mockserver.engine.generation import TextGenerator
from mockserver.server.app import create_app

STREAMS = 250
TOKENS = 1500
RUN = 64  # the chunks of one run of text deltas


def requests(generator: TextGenerator) -> list[object]:
    """What streams in flight keep alive, roughly: each reply's text and a run of 64 chunk dicts."""
    alive: list[object] = []
    for seed in range(STREAMS):
        text = generator.generate(seed, TOKENS)
        run = [{"index": 0, "delta": {"content": piece}, "finish_reason": None} for piece in text.tokens[:RUN]]
        alive.append((text, run))
    return alive


def full_collections(rounds: int) -> list[float]:
    """Milliseconds per full collection, ``rounds`` times."""
    pauses = []
    for _ in range(rounds):
        started = time.perf_counter()
        gc.collect()
        pauses.append((time.perf_counter() - started) * 1000)
    return pauses


def main() -> None:
    parser = arguments("gc_pauses", __doc__)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    app = create_app(Settings())
    generator = TextGenerator()
    generator.warm()
    load = os.getloadavg()[0]
    in_flight = requests(generator)
    tracked_before = len(gc.get_objects())
    before = full_collections(args.rounds)
    del in_flight
    gc.collect()
    gc.freeze()  # what the server does once started: start-up's objects, not the requests'
    frozen = gc.get_freeze_count()
    in_flight = requests(generator)
    tracked_after = len(gc.get_objects())
    after = full_collections(args.rounds)
    del in_flight
    report = {
        "benchmark": "gc_pauses",
        "command": command_line("gc_pauses"),
        "load_average_1m": round(load, 2),
        "objects_in_sight": tracked_before,
        "objects_frozen": frozen,
        "objects_in_sight_when_frozen": tracked_after,
        "full_collection_ms": {
            "in_sight": round(statistics.median(before), 1),
            "frozen": round(statistics.median(after), 1),
            "in_sight_runs": [round(p, 1) for p in before],
            "frozen_runs": [round(p, 1) for p in after],
        },
    }
    del app
    write_results(results_path("gc_pauses", args), report)
    print(report["full_collection_ms"], f"objects {tracked_before}, frozen {frozen}, then {tracked_after}")


if __name__ == "__main__":
    main()
