"""The Docker image's size above its base, for this checkout and another.

    python -m benchmarks image_size [--baseline DIR] [--output PATH]

Builds each checkout's image from its own Dockerfile (``docker build``, tagged
``mockserver-size:mockserver`` and ``mockserver-size:baseline``) and reports its size, the base
image's (``python:3.11-slim``) and the difference: what mockserver adds to the base, its
dependencies and its source. Needs a Docker daemon and the base image; ``scripts/container_test.sh``
gets both where none is to be had (it starts ``dockerd`` and, without registry access, makes a
stand-in for the base). Written to ``benchmarks/results/image_size.json``.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

from benchmarks.harness import arguments, checkouts, results_path, write_results

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
    parser = arguments("image_size", __doc__, baseline="another checkout, built beside this one")
    args = parser.parse_args()
    trees = checkouts(args.baseline)
    report = {name: build(name, root) for name, root in trees.items()}
    checkouts_built = {"base": BASE, "checkouts": {name: str(root) for name, root in trees.items()}}
    print(write_results(results_path("image_size", args), {**checkouts_built, **report}).read_text())


if __name__ == "__main__":
    main()
