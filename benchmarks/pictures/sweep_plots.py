"""PNG plots of a sweep report (``python -m benchmarks sweep``): needs matplotlib, from the ``benchmarks`` extra.

The sweep draws them itself after a full run; this draws them again from a report already written:

    python -m benchmarks sweep_plots [REPORT] [--directory DIR]

``REPORT`` defaults to ``benchmarks/results/sweep.json``; the plots ``sweep-rate.png``,
``sweep-chunks.png``, ``sweep-cpu.png`` and ``sweep-rates.png`` (named for the report) go beside it
unless ``--directory`` says where (the manual shows copies in ``docs/images/``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib

from benchmarks.harness import RESULTS, arguments

matplotlib.use("Agg")
import matplotlib.pyplot as plt

STYLES = {"mockserver": "C0", "floor": "C2", "aimock": "C3", "baseline": "C7"}


def _series(report: dict[str, Any], per_chunk: int, rate: float, key: str) -> dict[str, tuple[list[int], list[float]]]:
    out: dict[str, tuple[list[int], list[float]]] = {}
    for cell in report["phases"].get(f"tokens_per_chunk_{per_chunk}", []):
        if cell["rate"] != rate:
            continue
        for name, row in cell["servers"].items():
            if key not in row:
                continue
            xs, ys = out.setdefault(name, ([], []))
            # The rate cells repeat 750 tokens/s at 1 and 100 streams: the concurrency cells' points are kept.
            if cell["streams"] not in xs:
                xs.append(cell["streams"])
                ys.append(row[key])
    return out


def _concurrency_plot(report: dict[str, Any], key: str, ylabel: str, title: str, path: Path, **kwargs: Any) -> Path:
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    for ax, per_chunk in zip(axes, (1, 4), strict=True):
        for name, (xs, ys) in _series(report, per_chunk, 750.0, key).items():
            ax.plot(xs, ys, marker="o", label=name, color=STYLES.get(name))
        ax.set_title(f"750 tokens/s, {per_chunk} token{'s' if per_chunk > 1 else ''} per chunk")
        ax.set_xlabel("concurrent streams (server on one core)")
        ax.grid(alpha=0.3)
        for y in kwargs.get("lines", []):
            ax.axhline(y, color="k", lw=0.8, ls="--")
        if "ylim" in kwargs:
            ax.set_ylim(*kwargs["ylim"])
    axes[0].set_ylabel(ylabel)
    axes[0].legend()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_sweep(report: dict[str, Any], directory: Path, stem: str) -> list[Path]:
    paths = [
        _concurrency_plot(
            report,
            "rate_ratio_min",
            "slowest stream: achieved / target rate",
            "Achieved rate vs concurrency (1.0 is exact; dashed: within 1%)",
            directory / f"{stem}-rate.png",
            lines=[0.99, 1.0],
        ),
        _concurrency_plot(
            report,
            "chunks_per_token_min",
            "chunks x tokens-per-chunk / tokens (worst stream)",
            "Chunking vs concurrency (1.0: every chunk as configured; dashed: 0.98)",
            directory / f"{stem}-chunks.png",
            lines=[0.98],
        ),
        _concurrency_plot(
            report,
            "cpu_us_per_event",
            "server CPU µs per SSE event",
            "Server CPU per event vs concurrency",
            directory / f"{stem}-cpu.png",
        ),
    ]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    phase = report["phases"].get("tokens_per_chunk_1", [])
    for ax, streams in zip(axes, sorted({c["streams"] for c in phase if c["rate"] != 750.0} or {1}), strict=False):
        series: dict[str, tuple[list[float], list[float]]] = {}
        for cell in phase:
            if cell["streams"] != streams:
                continue
            for name, row in cell["servers"].items():
                if "rate_ratio_min" in row:
                    xs, ys = series.setdefault(name, ([], []))
                    xs.append(cell["rate"])
                    ys.append(row["rate_ratio_min"])
        for name, (xs, ys) in series.items():
            order = sorted(range(len(xs)), key=xs.__getitem__)
            ax.plot([xs[i] for i in order], [ys[i] for i in order], marker="o", label=name, color=STYLES.get(name))
        ax.set_xscale("log")
        ax.set_title(f"{streams} concurrent stream{'s' if streams > 1 else ''}")
        ax.set_xlabel("target tokens/s")
        ax.axhline(1.0, color="k", lw=0.8, ls="--")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("slowest stream: achieved / target rate")
    axes[0].legend()
    fig.suptitle("Achieved rate vs target rate")
    fig.tight_layout()
    path = directory / f"{stem}-rates.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    paths.append(path)
    return paths


def main() -> None:
    parser = arguments("sweep_plots", __doc__, output=False)
    parser.add_argument("report", type=Path, nargs="?", default=RESULTS / "sweep.json", help="a sweep's JSON")
    parser.add_argument("--directory", type=Path, help="where to draw the plots (default: beside the report)")
    args = parser.parse_args()
    report = json.loads(args.report.read_text(encoding="utf-8"))
    for path in plot_sweep(report, args.directory or args.report.parent, args.report.stem):
        print(f"plot -> {path}")


if __name__ == "__main__":
    main()
