"""Prefill: the first token waits for the prompt to be read.

On the live services the time to first token grows with the prompt: the model reads every
prompt token before it writes the first answer token. A tier profile's
``prefill_tokens_per_second`` gives that rate, and a request's TTFT becomes

    ttft_ms + (prompt_tokens - cached_tokens) / prefill + cached_tokens / (prefill * CACHED_SPEEDUP)

(scaled by ``time_scale``, like every wait). Cached prompt tokens are read :data:`CACHED_SPEEDUP`
times faster, an assumption; the replies report ``cached_tokens: 0`` today, so every prompt token
is read at the full rate. A profile without a prefill rate keeps a fixed TTFT, and
``x-mock-ttft-ms`` sets the TTFT exactly, prompt or not.

The prefill part of each reply is journalled (``prefill_ms``) and observed in ``/metrics``
(``mockserver_prefill_seconds``).
"""

from __future__ import annotations

import functools
from dataclasses import replace

from mockserver.config.fixture import TimingProfile
from mockserver.service.access import Admission

# Cached prompt tokens are read this many times faster than the others (an assumption: nothing is published).
CACHED_SPEEDUP = 10.0


def prefill_seconds(profile: TimingProfile, prompt_tokens: int, cached_tokens: int = 0) -> float:
    """Seconds the profile takes to read a prompt of ``prompt_tokens``, ``cached_tokens`` of them cached."""
    rate = profile.prefill_tokens_per_second
    if rate is None or prompt_tokens <= 0:
        return 0.0
    cached = min(max(0, cached_tokens), prompt_tokens)
    return (prompt_tokens - cached) / rate + cached / (rate * CACHED_SPEEDUP)


def with_prefill(admission: Admission, prompt_tokens: int, cached_tokens: int = 0) -> tuple[Admission, float]:
    """The admission whose profile's TTFT includes reading the prompt, and the prefill in seconds.

    The admission is unchanged when ``x-mock-ttft-ms`` set the TTFT or the profile has no prefill rate.
    """
    if admission.overrides.ttft_ms is not None:
        return admission, 0.0
    seconds = prefill_seconds(admission.profile, prompt_tokens, cached_tokens)
    if seconds <= 0:
        return admission, 0.0
    return replace(admission, profile=_later(admission.profile, admission.profile.ttft_ms + seconds * 1000)), seconds


# A test run sends the same prompts again and again: the profiles they make are remembered (a pydantic
# copy costs more than the lookup). Both sides are immutable; bounded, as the prompts are the client's.
@functools.lru_cache(maxsize=256)
def _later(profile: TimingProfile, ttft_ms: float) -> TimingProfile:
    return profile.model_copy(update={"ttft_ms": ttft_ms})
