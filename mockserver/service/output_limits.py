"""How much output one request may ask for, checked before any token is generated.

Two caps keep a single request from tying the server up:

- **per answer**, the model's ``max_output_tokens`` (128,000 by default): a larger
  ``max_tokens`` / ``max_completion_tokens`` / ``max_output_tokens`` is refused with the
  live API's 400 ("max_tokens is too large: ...");
- **per request**, :data:`MAX_REQUEST_OUTPUT_TOKENS` over all of Chat's ``n`` choices.
  The live API has no such cap (``n`` is bounded by the context window there); it is the
  mock's own guard, worded to name ``n``. Each choice counts for the most it can really
  produce: its reasoning plus the longest answer the server writes
  (the longest ``output_tokens`` range, or the ``x-mock-output-tokens`` override), at most the limit.
"""

from __future__ import annotations

from mockserver import errors
from mockserver.config.fixture import Fixture
from mockserver.service.access import Admission

MAX_REQUEST_OUTPUT_TOKENS = 1_000_000


def check_limit(admission: Admission, param: str, value: int | None) -> None:
    """Refuse an output limit above what the model can produce."""
    most = admission.model.max_output_tokens
    if value is not None and value > most:
        raise errors.output_limit_too_large(param, value, most)


def check_choices(
    fixture: Fixture, admission: Admission, *, choices: int, reasoning: int, limit: int | None, limit_param: str
) -> None:
    """Refuse ``choices`` answers whose output together passes :data:`MAX_REQUEST_OUTPUT_TOKENS`."""
    answer = admission.overrides.output_tokens
    per_choice = reasoning + (answer if answer is not None else fixture.output_tokens.longest)
    if limit is not None:
        per_choice = min(per_choice, limit)
    if choices * per_choice > MAX_REQUEST_OUTPUT_TOKENS:
        raise errors.request_output_too_large(choices, per_choice, MAX_REQUEST_OUTPUT_TOKENS, limit_param)
