"""A shortened soak (``benchmarks/load/soak.py``): a mixed, partly hostile load on a server process,
then everything it held must come back: no 5xx, replies held, streams and Ultrafast slots at
zero, file descriptors and tasks where they started, memory flat after warm-up."""

from __future__ import annotations

import os

from benchmarks.load import soak

SOAK_SECONDS = float(os.environ.get("MOCKSERVER_SOAK_SECONDS", "30"))


def test_a_short_soak_comes_back_to_idle() -> None:
    report = soak.run(SOAK_SECONDS, workers=8, interval=2.5)
    assert soak.verdict(report) == [], {k: v for k, v in report.items() if k != "samples"}
    assert report["abandoned_streams"] > 0 and report["abandoned_non_streaming"] > 0
    assert report["by_status"].get(400) and report["by_status"].get(413)  # the hostile bodies were refused
    assert report["settled"]["stored_responses"] <= 300 and report["settled"]["journal_entries"] <= 500
