"""How the live API writes values into its messages and headers: masked keys, and durations in Go's
``time.Duration`` form."""

from __future__ import annotations

import math


def mask_api_key(key: str) -> str:
    """Mask a key the way the live API does in its 401 message: ``sk-abc***xyz``."""
    if len(key) <= 8:
        return "*" * len(key)
    return f"{key[:6]}{'*' * max(len(key) - 10, 3)}{key[-4:]}"


def ceil_ms(seconds: float) -> int:
    """Whole milliseconds, rounded up, ignoring float noise (100.0000001 ms is 100 ms).

    That is ``ceil(round(ms, 6))``; ``round`` to digits is slow (it formats the number), and the
    rate-limit headers of every reply call this, so it is used only where it can matter: within
    a millionth of a millisecond above a whole one. Further above, the answer is the next one."""
    ms = seconds * 1000
    whole = math.floor(ms)
    if ms - whole > 1e-6:
        return whole + 1
    return math.ceil(round(ms, 6))


def go_duration(seconds: float) -> str:
    """Format like Go's ``time.Duration``, as the live headers do: ``20ms``, ``1s``, ``1.5s``, ``6m0s``."""
    ms = max(0, ceil_ms(seconds))
    if ms == 0:
        return "0s"
    if ms < 1000:
        return f"{ms}ms"
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    secs = f"{rest // 1000}" if rest % 1000 == 0 else f"{rest / 1000:.3f}".rstrip("0")
    text = f"{hours}h" if hours else ""
    if hours or minutes:
        text += f"{minutes}m"
    return f"{text}{secs}s"
