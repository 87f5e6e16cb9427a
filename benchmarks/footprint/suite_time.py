"""How long the README's test command takes: ``python -m pytest`` run once, from this checkout.

Writes the wall time, the CPU time of pytest and everything it started, the machine's cores and load,
and pytest's own summary (passed, skipped, failed) to ``results/suite_time.json``. The README quotes
it. Run it in the venv the README's command makes, with nothing else busy::

    python -m benchmarks suite_time [-- PYTEST_ARGS...]
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import time

from benchmarks.harness import ROOT, arguments, results_path, write_results

_COUNT = re.compile(r"(\d+) (passed|skipped|failed|errors?|xfailed|xpassed|deselected)")


def summary_counts(text: str) -> dict[str, int]:
    """pytest's last summary line, ``= 1990 passed, 12 skipped in 812.4s =``, as counts by outcome."""
    lines = [line for line in text.splitlines() if re.search(r" in [\d.]+s", line) and _COUNT.search(line)]
    if not lines:
        return {}
    return {kind.rstrip("s") if kind.startswith("error") else kind: int(n) for n, kind in _COUNT.findall(lines[-1])}


def main() -> int:
    parser = arguments("suite_time", __doc__)
    parser.add_argument("pytest_args", nargs="*", help="more arguments for pytest, after --")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    started = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args.pytest_args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.monotonic() - started
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    counts = summary_counts(run.stdout)
    sys.stdout.write(run.stdout[-3000:])
    output = write_results(
        results_path("suite_time", args),
        {
            "command": "python -m pytest",
            "exit_status": run.returncode,
            "wall_s": round(wall, 1),
            "wall_min": round(wall / 60, 1),
            "cpu_s": round(children.ru_utime + children.ru_stime, 1),
            "cores": os.cpu_count(),
            "load_before": round(load_before, 2),
            "load_after": round(os.getloadavg()[0], 2),
            "python": sys.version.split()[0],
            "outcomes": counts,
        },
    )
    print(f"the suite: {wall / 60:.1f} min wall, exit {run.returncode}, {counts}; written to {output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
