"""``mockserver cassette show``: one row per exchange, aligned for a terminal."""

from __future__ import annotations

from collections.abc import Sequence

from mockserver.cassettes.figures import figures
from mockserver.cassettes.format import Record

COLUMNS = ("#", "path", "model", "tier", "stream", "status", "tokens", "TTFT ms", "duration ms")


def rows(records: Sequence[Record]) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for number, record in enumerate(records, start=1):
        f = figures(record)
        out.append(
            (
                str(number),
                f"{record.request.method} {record.request.path}",
                f.model or "-",
                f.tier if record.api != "opaque" and record.api != "models" else "-",
                "yes" if f.stream else "no",
                str(f.status),
                "-" if f.output_tokens is None else str(f.output_tokens),
                "-" if f.ttft_ms is None else f"{f.ttft_ms:.0f}",
                f"{f.duration_ms:.0f}",
            )
        )
    return out


def render(records: Sequence[Record]) -> str:
    table = [COLUMNS, *rows(records)]
    widths = [max(len(row[i]) for row in table) for i in range(len(COLUMNS))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in table]
    return "\n".join(lines)
