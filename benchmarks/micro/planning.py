"""How long making a long reply's text takes when planning it: lazily, as the server does (its
length known at once, its words drawn as the stream reads them), against drawing every word up
front (what planning cost before the text was lazy).

In one interpreter, with the text generator warmed as a server's is: ``--rounds`` replies of
1,500 tokens, each planned lazily and then drawn whole, timed apart (CPU time). Medians.

    python -m benchmarks planning [--rounds 50] [--output FILE]

Writes ``benchmarks/results/planning.json``.
"""

from __future__ import annotations

import os
import statistics
import time

from benchmarks.harness import arguments, command_line, results_path, write_results
from mockserver.engine.generation import TextGenerator

TOKENS = 1500


def main() -> None:
    parser = arguments("planning", __doc__)
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    generator = TextGenerator()
    generator.warm()
    lazy, whole = [], []
    for seed in range(args.rounds):
        started = time.process_time()
        text = generator.generate(seed, TOKENS)
        planned = time.process_time()
        assert len(text.tokens) == TOKENS  # every word drawn, as planning did before the text was lazy
        drawn = time.process_time()
        lazy.append((planned - started) * 1000)
        whole.append((drawn - started) * 1000)
    report = {
        "benchmark": "planning",
        "command": command_line("planning"),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "tokens": TOKENS,
        "text_ms": {"lazy": round(statistics.median(lazy), 2), "drawn_up_front": round(statistics.median(whole), 2)},
    }
    write_results(results_path("planning", args), report)
    print(report["text_ms"])


if __name__ == "__main__":
    main()
