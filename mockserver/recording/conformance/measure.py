"""Send every pair to the generator and pool the comparisons per endpoint and mode.

Pooled coverage is the covered paths over the recorded paths of every pair answered in the mode
(a pair with many paths weighs more); union coverage is the share of the distinct recorded paths the
generator produced at least once; a path "never produced" is one of those it did not. A refusal is
any answer but a 200 to a request the real API answered with a 200.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mockserver.recording.conformance.compare import Comparison, Mismatch, Reply, compare
from mockserver.recording.conformance.pairs import Pair, Skipped
from mockserver.recording.conformance.shapes import CHAT, EMBEDDINGS, MESSAGES, RESPONSES

MODES = {CHAT: "chat", RESPONSES: "responses", EMBEDDINGS: "embeddings", MESSAGES: "messages"}
ORDER = ("chat plain", "chat stream", "responses plain", "responses stream", "embeddings plain", "messages plain",
         "messages stream")  # fmt: skip
LABELS = {"chat plain": "Chat", "chat stream": "Chat streamed", "responses plain": "Responses",
          "responses stream": "Responses streamed", "embeddings plain": "embeddings", "messages plain": "Messages",
          "messages stream": "Messages streamed"}  # fmt: skip
SEQUENCE_EXAMPLES = 3


def mode_of(pair: Pair) -> str:
    return f"{MODES[pair.endpoint]} {'stream' if pair.stream else 'plain'}"


def norm_error(message: Any) -> str:
    """An error message with its ids and numbers blanked, to group refusals."""
    text = re.sub(r"\b(call|toolu|srvtoolu|msg|resp|fc|rs)_[A-Za-z0-9]+", r"\1_…", str(message))
    return re.sub(r"\d+", "N", text)[:200]


@dataclass
class Group:
    """The pooled figures of one endpoint and mode."""

    mode: str
    pairs: int = 0
    answered: int = 0
    real: int = 0
    covered: int = 0
    refused: list[tuple[str, Any, str | None]] = field(default_factory=list)  # (source, status, message)
    missing_pairs: Counter[str] = field(default_factory=Counter)
    real_union: Counter[str] = field(default_factory=Counter)
    mock_union: Counter[str] = field(default_factory=Counter)
    mismatch: Counter[Mismatch] = field(default_factory=Counter)
    nullnote: Counter[Mismatch] = field(default_factory=Counter)
    real_events: Counter[str] = field(default_factory=Counter)
    mock_events: Counter[str] = field(default_factory=Counter)
    same_sequence: int = 0
    sequence_examples: list[tuple[str, list[str], list[str]]] = field(default_factory=list)
    tool_real: int = 0
    tool_mock: int = 0
    tool_unasked: int = 0
    tool_miss: list[str] = field(default_factory=list)
    tool_args_invalid: list[tuple[str, str]] = field(default_factory=list)
    forced: int = 0
    forced_ignored: list[tuple[str, str]] = field(default_factory=list)
    parallel_violations: list[tuple[str, str]] = field(default_factory=list)
    reason_mismatch: list[tuple[str, str]] = field(default_factory=list)
    schema: Counter[tuple[str, bool]] = field(default_factory=Counter)
    schema_fail: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    example: dict[tuple[str, str], str] = field(default_factory=dict)  # (kind, path) -> the first source

    @property
    def label(self) -> str:
        return LABELS.get(self.mode, self.mode)

    def add(self, source: str, c: Comparison) -> None:
        note = self.example.setdefault
        self.answered += 1
        self.real += c.real_paths
        self.covered += c.covered
        for path in c.missing:
            self.missing_pairs[path] += 1
            note(("miss", path), source)
        for path in c.real_path_set:
            self.real_union[path] += 1
            note(("real", path), source)
        self.mock_union.update(c.mock_paths)
        for row in c.mismatch:
            self.mismatch[row] += 1
            note(("mm", row[0]), source)
        self.nullnote.update(c.nullnote)
        for kind in c.real_events:
            self.real_events[kind] += 1
            note(("ev", kind), source)
        self.mock_events.update(c.mock_events)
        if c.stream:
            if c.same_sequence:
                self.same_sequence += 1
            elif len(self.sequence_examples) < SEQUENCE_EXAMPLES:
                self.sequence_examples.append((source, c.real_sequence, c.mock_sequence))
        if c.not_json:
            self.notes.append(f"{source}: {c.not_json} SSE data lines are not JSON")
        if c.content_type is not None:
            self.notes.append(f"{source}: stream content-type {c.content_type!r}")
        self._add_tools(source, c)

    def _add_tools(self, source: str, c: Comparison) -> None:
        if c.real_tool_call is not None:
            if c.real_tool_call:
                self.tool_real += 1
                if c.mock_tool_call:
                    self.tool_mock += 1
                else:
                    self.tool_miss.append(source)
            elif c.mock_tool_call:
                self.tool_unasked += 1
        if c.tool_args_invalid:
            self.tool_args_invalid.append((source, c.tool_args_invalid[0]))
        if c.forced:
            self.forced += 1
            if not c.mock_tool_call:
                self.forced_ignored.append((source, c.forced))
        if c.parallel_violation:
            self.parallel_violations.append((source, c.parallel_violation))
        if c.reason_mismatch:
            self.reason_mismatch.append((source, c.reason_mismatch))
        if c.schema_kind and c.schema_check:
            ok = c.schema_check == "ok"
            self.schema[(c.schema_kind, ok)] += 1
            if not ok:
                self.schema_fail.append((source, c.schema_check))

    def coverage(self) -> float:
        return 100.0 * self.covered / self.real if self.real else 100.0

    def never(self) -> list[tuple[str, int]]:
        """The recorded paths the generator never produced, with how many recorded replies had each."""
        return _most_first(self.real_union, self.mock_union)

    def union_coverage(self) -> float:
        return 100.0 * (1 - len(self.never()) / len(self.real_union)) if self.real_union else 100.0

    def mock_only(self) -> list[tuple[str, int]]:
        return _most_first(self.mock_union, self.real_union)

    def missing_event_types(self) -> list[tuple[str, int]]:
        """The event types of the recorded streams the generator never sent, with how many streams had each."""
        return _most_first(self.real_events, self.mock_events)

    def schema_ok(self) -> tuple[int, int]:
        return sum(n for (_, ok), n in self.schema.items() if ok), sum(self.schema.values())


def _most_first(counts: Counter[str], leaving_out: Counter[str]) -> list[tuple[str, int]]:
    """The keys of ``counts`` not in ``leaving_out``, with their counts, the most frequent first."""
    return sorted(((k, n) for k, n in counts.items() if k not in leaving_out), key=lambda x: (-x[1], x[0]))


@dataclass
class PairResult:
    source: str
    mode: str
    status: Any
    error: str | None = None
    comparison: Comparison | None = None


@dataclass
class Measurement:
    groups: dict[str, Group]
    results: list[PairResult]
    skipped: list[Skipped]
    repositories: list[str]
    elapsed_s: float
    models: dict[str, str]  # what the requests were sent as: openai, embeddings, anthropic

    def ordered(self) -> list[Group]:
        return sorted(self.groups.values(), key=lambda g: ORDER.index(g.mode) if g.mode in ORDER else len(ORDER))

    @property
    def pairs(self) -> int:
        return sum(g.pairs for g in self.groups.values())

    def coverage(self) -> float:
        real = sum(g.real for g in self.groups.values())
        return 100.0 * sum(g.covered for g in self.groups.values()) / real if real else 0.0

    def refused(self) -> int:
        return sum(len(g.refused) for g in self.groups.values())

    def never_total(self) -> int:
        return sum(len(g.never()) for g in self.groups.values())

    def missing_event_types(self) -> list[tuple[str, str, int]]:
        return [(g.mode, e, n) for g in self.ordered() for e, n in g.missing_event_types()]


def measure(
    pairs: Sequence[Pair],
    send: Callable[[Pair], Reply],
    *,
    skipped: Sequence[Skipped] = (),
    repositories: Sequence[str] = (),
    models: dict[str, str] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Measurement:
    """Send each pair with ``send`` and compare; the figures pooled per mode."""
    started = clock()
    groups: dict[str, Group] = {}
    results = []
    for pair in pairs:
        mode = mode_of(pair)
        group = groups.setdefault(mode, Group(mode))
        group.pairs += 1
        reply = send(pair)
        if not reply.answered:
            group.refused.append((pair.source, reply.status, reply.error))
            results.append(PairResult(pair.source, mode, reply.status, reply.error))
            continue
        comparison = compare(pair, reply)
        group.add(pair.source, comparison)
        results.append(PairResult(pair.source, mode, reply.status, comparison=comparison))
    return Measurement(groups, results, list(skipped), list(repositories), clock() - started, dict(models or {}))
