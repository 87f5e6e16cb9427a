"""Run a benchmark by name: ``python -m benchmarks NAME [ARGS]``; with no name, the list of them.

Each scenario is a module of one of :data:`GROUPS`, named by its file (``load/sweep.py`` is
``sweep``). It runs as if it were the main program, with ``ARGS`` as its command line, so
``python -m benchmarks NAME --help`` gives its own help. Run from the repository's root.
"""

from __future__ import annotations

import ast
import difflib
import runpy
import sys
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
GROUPS = {
    "micro": "micro-benchmarks: one piece measured in a process of its own",
    "load": "load scenarios: a server process under load on the real clock",
    "footprint": "footprint: start-up, memory, installed size, the image, the test suite",
    "fidelity": "fidelity: replies against recorded real traffic",
    "pictures": "pictures: what the README and the manual show",
}


def scenarios() -> dict[str, tuple[str, str, str]]:
    """Every scenario by name: its group, its module and its docstring's first sentence, shortened."""
    found: dict[str, tuple[str, str, str]] = {}
    for group in GROUPS:
        for path in sorted((HERE / group).glob("*.py")):
            if path.name.startswith("_"):
                continue
            doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
            if path.stem in found:
                raise RuntimeError(f"two scenarios are named {path.stem}: {found[path.stem][1]} and {group}")
            summary = textwrap.shorten(doc.split("\n\n")[0], 110, placeholder=" ...")
            found[path.stem] = (group, f"benchmarks.{group}.{path.stem}", summary)
    return found


def listing() -> str:
    everything = scenarios()
    width = max(map(len, everything))
    lines = ["usage: python -m benchmarks NAME [ARGS]    (python -m benchmarks NAME --help: its own options)"]
    for group, title in GROUPS.items():
        lines += ["", f"{title}:"]
        lines += [f"  {name:<{width}}  {doc}" for name, (g, _, doc) in everything.items() if g == group]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("--list", "-h", "--help"):
        print(listing())
        return 0
    name, *args = argv
    everything = scenarios()
    if name not in everything:
        close = difflib.get_close_matches(name, everything, n=3)
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        print(
            f"python -m benchmarks: no scenario named {name!r}{hint} (python -m benchmarks lists them)", file=sys.stderr
        )
        return 2
    sys.argv = [sys.argv[0], *args]
    runpy.run_module(everything[name][1], run_name="__main__", alter_sys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
