"""Tool arguments from the prompt: how many of the corpus's arguments come out exact, per rule, and
what reading a prompt costs per tool call, next to generating the arguments alone.

- the corpus is ``tests/engine/prompted_corpus.py`` (English and Chinese prompts, tool schemas and
  the arguments a model would take);
- the cost is CPU time per call (``time.process_time``), one call at a time, for a short prompt,
  a 2,000-character prompt full of cues, quotes and numbers (the most that is read), and a
  600,000-character one (only its last 2,000 characters are read), against ``instance_for`` alone
  on the same schema in the same run.

    python -m benchmarks prompted_arguments

Writes ``benchmarks/results/prompted_arguments.json``.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from typing import Any

from benchmarks.harness import arguments, results_path, write_results
from mockserver.engine.structured import FunctionSpec, Prompt, call_arguments, instance_for
from tests.engine.prompted_corpus import CASES, CUSTOMER, WEATHER

BUDGET_SECONDS = 1.0


def corpus() -> dict[str, Any]:
    rules: dict[str, list[int]] = {}
    for case in CASES:
        prompt = Prompt.of(case.prompt, [case.system] if case.system else [])
        arguments = call_arguments(FunctionSpec(case.tool, case.parameters), random.Random(1), prompt)
        counts = rules.setdefault(case.rule, [0, 0])
        for name, expected in case.expected.items():
            counts[1] += 1
            got = arguments.get(name)
            counts[0] += got == expected and type(got) is type(expected)
    good = sum(g for g, _ in rules.values())
    total = sum(t for _, t in rules.values())
    return {
        "prompts": len(CASES),
        "per_rule": {rule: {"exact": g, "arguments": t, "rate": round(g / t, 3)} for rule, (g, t) in rules.items()},
        "all": {"exact": good, "arguments": total, "rate": round(good / total, 3)},
    }


def per_call(work: Callable[[], object]) -> dict[str, float]:
    calls = 0
    started = time.process_time()
    while time.process_time() - started < BUDGET_SECONDS:
        work()
        calls += 1
    return {"calls": calls, "us_per_call": round((time.process_time() - started) / calls * 1e6, 1)}


def cost() -> dict[str, Any]:
    tool = FunctionSpec("create_customer", CUSTOMER)
    weather = FunctionSpec("get_weather", WEATHER)
    nasty = "named 'a' in \"b\" for 1 city: 名为x 在y 2026-01-01 a@b.co f(1, 'x') " * 40
    prompts = {
        "short prompt": Prompt.of("Create a customer named Ada Lovelace, ada@example.com"),
        "2,000 characters of cues": Prompt.of(nasty),
        "600,000 characters (last 2,000 read)": Prompt.of(nasty * 150),
    }
    out: dict[str, Any] = {
        "generated only (create_customer)": per_call(lambda: instance_for(tool.parameters, random.Random(1))),
        "generated only (get_weather)": per_call(lambda: instance_for(weather.parameters, random.Random(1))),
    }
    for label, prompt in prompts.items():
        out[f"{label} (create_customer)"] = per_call(lambda p=prompt: call_arguments(tool, random.Random(1), p))
        out[f"{label} (get_weather)"] = per_call(lambda p=prompt: call_arguments(weather, random.Random(1), p))
    return out


def main() -> None:
    args = arguments("prompted_arguments", __doc__).parse_args()
    results = {
        "corpus": corpus(),
        "cost_per_call": cost(),
        "machine": {"cpus": os.cpu_count(), "load_average": [round(x, 2) for x in os.getloadavg()]},
        "note": "CPU time of one call at a time; the load average was taken at the end of the run",
    }
    write_results(results_path("prompted_arguments", args), results, stamp=False, show=True, ascii_only=False)


if __name__ == "__main__":
    main()
