"""Durations as the live API writes them: whole milliseconds rounded up, float noise ignored."""

from __future__ import annotations

import math
import random

from mockserver.errors.formats import ceil_ms, go_duration


def test_ceil_ms_is_the_rounded_up_millisecond_with_float_noise_ignored() -> None:
    rng = random.Random(7)
    samples = [rng.uniform(-5, 120) for _ in range(20_000)]
    samples += [k / 1000 + noise for k in range(2_000) for noise in (0.0, 1e-10, -1e-10, 5e-10, 1e-9, 2e-9)]
    for seconds in samples:
        assert ceil_ms(seconds) == math.ceil(round(seconds * 1000, 6)), seconds
    assert ceil_ms(0.1000000001) == 100 and ceil_ms(0.1001) == 101


def test_go_duration() -> None:
    assert [go_duration(s) for s in (0, 0.02, 1, 1.5, 360, 3661.5)] == ["0s", "20ms", "1s", "1.5s", "6m0s", "1h1m1.5s"]
