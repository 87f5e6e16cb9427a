"""Draw the order of the checks an inference request meets: docs/images/request-checks.png.

    python scripts/draw_checks.py [--output PATH]

The order is the server's own (``mockserver/service/access.py`` and ``mockserver/api/serving.py``):
the key, the model, the tier, then the shared resources (quota, an Ultrafast capacity slot, the rate
windows), then a fault if one is drawn, then the reply. Under each check, what a refusal answers.
Drawn with matplotlib (``pip install -e ".[benchmarks]"``), so the manual needs no script from a CDN.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

OUTPUT = Path(__file__).resolve().parents[1] / "docs" / "images" / "request-checks.png"

# (check, what it looks at, what a refusal answers)
CHECKS = [
    ("key", "Authorization header", "401 invalid_api_key\n401 account_deactivated"),
    ("model", "listed, and visible\nto the key", "404 model_not_found\n403 (project)"),
    ("tier", "service_tier and\nthe key's access", "403 or downgrade\n400 unsupported tier"),
    ("quota", "the organization's\nspend or tokens", "429 insufficient_quota\n(not retried)"),
    ("capacity", "an Ultrafast slot\n(Ultrafast only)", "429 or 503, param\nservice_tier; or downgrade"),
    ("rate limits", "RPM and TPM\nper key and model", "429 rate_limit_exceeded\nparam null"),
    ("fault", "x-mock-fault, fixture\nrules, probability", "the fault's error,\ndrop, stall, ..."),
    ("reply", "paced on the tier's\nschedule", "200, streamed\nor held"),
]


def draw(output: Path) -> None:
    width, gap = 1.75, 0.4
    fig, ax = plt.subplots(figsize=(16, 3.6), dpi=110)
    ax.set_xlim(-0.2, len(CHECKS) * (width + gap))
    ax.set_ylim(-2.2, 1.35)
    ax.axis("off")
    for index, (name, looks_at, refusal) in enumerate(CHECKS):
        x = index * (width + gap)
        last = index == len(CHECKS) - 1
        face = "#d8f0d8" if last else "#dde8f7"
        ax.add_patch(FancyBboxPatch((x, 0), width, 1, boxstyle="round,pad=0.04", fc=face, ec="#3b5b8c"))
        ax.text(x + width / 2, 0.68, name, ha="center", va="center", fontsize=13, weight="bold")
        ax.text(x + width / 2, 0.3, looks_at, ha="center", va="center", fontsize=8.5)
        colour = "#1d6b1d" if last else "#a12a2a"
        ax.text(x + width / 2, -0.95, refusal, ha="center", va="center", fontsize=8.5, color=colour)
        if not last:
            ax.add_patch(FancyArrowPatch((x + width / 2, -0.05), (x + width / 2, -0.55), arrowstyle="-|>",
                                         mutation_scale=12, color="#a12a2a"))  # fmt: skip
            ax.add_patch(FancyArrowPatch((x + width + 0.05, 0.5), (x + width + gap - 0.05, 0.5), arrowstyle="-|>",
                                         mutation_scale=14, color="#3b5b8c"))  # fmt: skip
    ax.text(0, 1.22, "An inference request meets these checks in this order; the first that refuses answers.",
            fontsize=11, ha="left")  # fmt: skip
    ax.text(0, -1.85, "Under each check: what a refusal answers. Quota, capacity and rate limits are taken only by "
            "a request that passed the checks before them, so a refused request costs no slot and no window.",
            fontsize=9, ha="left", color="#444444")  # fmt: skip
    output.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(output, bbox_inches="tight")
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    draw(parser.parse_args().output)


if __name__ == "__main__":
    main()
