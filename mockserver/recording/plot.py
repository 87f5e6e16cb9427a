"""The what-if picture: stacked bars of model time and client time per tier, drawn with matplotlib.

matplotlib is an extra (``pip install 'mockserver[plot]'``); it is imported only when a picture is asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from mockserver.recording.whatif import TierFigures

MISSING = "the picture needs matplotlib: pip install 'mockserver[plot]'"


class PlotUnavailable(RuntimeError):
    pass


def draw(rows: Sequence[TierFigures], path: str | Path, title: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise PlotUnavailable(MISSING) from None
    labels = [
        f"{r.tier}\n({'measured' if r.measured else 'computed'})" if r.tier != "recorded" else "recorded" for r in rows
    ]
    model = [r.model_s for r in rows]
    client = [r.client_s for r in rows]
    figure, axes = plt.subplots(figsize=(max(6.0, 1.3 * len(rows)), 4.2), dpi=120)
    axes.bar(labels, model, label="model time (TTFT + tokens / rate)", color="#4c72b0")
    axes.bar(labels, client, bottom=model, label="client time (tools, I/O, between calls)", color="#dd8452")
    for i, row in enumerate(rows):
        axes.text(
            i,
            row.end_to_end_s,
            f"{row.end_to_end_s:.1f} s"
            + ("" if row.speedup_vs_recorded is None else f"\n{row.speedup_vs_recorded:.1f}x"),
            ha="center",
            va="bottom",
            fontsize=8,
        )
    axes.set_ylabel("end-to-end time (s)")
    axes.set_title(title, fontsize=10)
    axes.set_ylim(0, max(r.end_to_end_s for r in rows) * 1.45)  # room above the bars for the legend
    axes.legend(fontsize=8, loc="upper center", ncols=2)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
