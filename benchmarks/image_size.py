"""The Docker image's size above its base, for this checkout and another.

    python benchmarks/image_size.py [--baseline DIR] [--output PATH]

Builds each checkout's image from its own Dockerfile (``docker build``, tagged
``mockserver-size:mockserver`` and ``mockserver-size:baseline``) and reports its size, the base
image's (``python:3.11-slim``) and the difference: what mockserver adds to the base, its
dependencies and its source. Needs a Docker daemon and the base image; ``scripts/container_test.sh``
gets both where none is to be had (it starts ``dockerd`` and, without registry access, makes a
stand-in for the base). Written to ``benchmarks/results/image_size.json``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import RESULTS, checkouts, write_report

BASE = "python:3.11-slim"


def size_mb(image: str) -> float:
    done = subprocess.run(
        ["docker", "image", "inspect", "-f", "{{.Size}}", image], capture_output=True, text=True, check=True
    )
    return round(int(done.stdout.strip()) / 1e6, 1)


def build(name: str, checkout: Path) -> dict[str, Any]:
    tag = f"mockserver-size:{name}"
    started = time.perf_counter()
    subprocess.run(["docker", "build", "-q", "-t", tag, str(checkout)], check=True, stdout=subprocess.DEVNULL)
    built = time.perf_counter() - started
    image, base = size_mb(tag), size_mb(BASE)
    return {"image_mb": image, "base_mb": base, "above_base_mb": round(image - base, 1), "build_s": round(built, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", type=Path, help="another checkout, built beside this one")
    parser.add_argument("--output", type=Path, default=RESULTS / "image_size.json")
    args = parser.parse_args()
    trees = checkouts(args.baseline)
    report = {name: build(name, root) for name, root in trees.items()}
    write_report(args.output, {"base": BASE, "checkouts": {name: str(root) for name, root in trees.items()}, **report})
    print(args.output.read_text())


if __name__ == "__main__":
    main()
