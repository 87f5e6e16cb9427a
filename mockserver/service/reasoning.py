"""How much a reasoning model thinks before it answers, shared by Chat Completions and Responses.

``effort`` maps to a number of reasoning tokens (the fixture's ``reasoning_tokens``).
They are produced at the tier's rate before the visible answer and counted in
``output_tokens`` / ``completion_tokens`` and in ``reasoning_tokens``.

A Responses summary (``reasoning.summary``) is carved out of that budget, not added
to it: the last ``summary_tokens()`` of the reasoning tokens are streamed as
visible summary text, so the effort alone decides how long the answer waits and how
many reasoning tokens are billed, with or without a summary, on both APIs.
"""

from __future__ import annotations

from dataclasses import dataclass

from mockserver.config.fixture import Fixture
from mockserver.service.access import Admission

# Summary length per requested style, capped by the reasoning budget.
SUMMARY_TOKENS: dict[str, int] = {"concise": 24, "auto": 48, "detailed": 96}


def effort_for(fixture: Fixture, admission: Admission, effort: str | None) -> str | None:
    """The effort a request runs at: its own, else the fixture's default; None for non-reasoning models."""
    if not admission.model.reasoning:
        return None
    return effort or fixture.default_reasoning_effort


def reasoning_tokens_for(fixture: Fixture, admission: Admission, effort: str | None) -> int:
    resolved = effort_for(fixture, admission, effort)
    return fixture.reasoning_tokens.get(resolved, 0) if resolved else 0  # type: ignore[call-overload]


def summary_tokens(summary: str | None, reasoning_tokens: int) -> int:
    """How many of the reasoning tokens are streamed as summary text."""
    if not summary or reasoning_tokens <= 0:
        return 0
    return min(reasoning_tokens, SUMMARY_TOKENS.get(summary, SUMMARY_TOKENS["auto"]))


@dataclass(slots=True)
class OutputCut:
    """Where an output limit ends one answer: reasoning first, then the visible tokens.

    Made for every choice and only read: not frozen, as a frozen dataclass sets each field through
    ``object.__setattr__``, several times the cost to make.

    ``max_output_tokens`` (Responses) and ``max_completion_tokens`` / ``max_tokens`` (Chat)
    count reasoning tokens too, as on the live API, so a low limit can end an answer inside
    its reasoning, with no visible text at all.
    """

    reasoning: int  # reasoning tokens produced
    visible: int  # visible tokens produced
    incomplete: bool  # the limit cut something

    @property
    def produced(self) -> int:
        return self.reasoning + self.visible


def cut_output(reasoning_tokens: int, visible_tokens: int, limit: int | None) -> OutputCut:
    """Apply ``limit`` to an answer of ``reasoning_tokens`` followed by ``visible_tokens``."""
    planned = reasoning_tokens + visible_tokens
    produced = planned if limit is None else min(limit, planned)
    reasoning = min(reasoning_tokens, produced)
    return OutputCut(reasoning=reasoning, visible=produced - reasoning, incomplete=produced < planned)
