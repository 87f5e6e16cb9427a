"""Every kind of cassette a replay reads, as records of the native format.

A path given to ``--replay``, the fixture's ``replay:``, the pytest marker or ``cassette show|check`` is
a file, a folder (its cassettes, recursively) or a glob. A native cassette (JSON Lines,
:mod:`.format`) is read by :mod:`.files`; a VCR cassette (:mod:`.vcr`) is read and each of its inference
interactions made a :class:`~mockserver.cassettes.format.Record`, so the replay that serves native
recordings serves it the same way. What a VCR cassette cannot say is left empty: every event of a
recorded stream is at offset 0 (a VCR file holds no timing), and the request keeps no header.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mockserver.cassettes import files, redaction, vcr
from mockserver.cassettes.format import Event, Record, RecordedRequest, RecordedResponse, api_for, decode, encode
from mockserver.cassettes.limits import DEFAULT_MAX_CASSETTE_BYTES

NATIVE_SUFFIX = ".jsonl"
CASSETTE_SUFFIXES = (NATIVE_SUFFIX, *vcr.VCR_SUFFIXES)
NO_TIMING_AT = "1970-01-01T00:00:00.000Z"  # a VCR cassette says neither when nor how long


@dataclass
class Loaded:
    """The cassettes of a set of paths, and the VCR interactions that are not served."""

    cassettes: list[files.Cassette] = field(default_factory=list)
    skipped: list[vcr.VcrSkip] = field(default_factory=list)

    @property
    def timed(self) -> bool:
        """Whether every cassette recorded its timing (none is a VCR cassette)."""
        return not any(c.untimed for c in self.cassettes)


def expand(paths: Sequence[str]) -> list[str]:
    """The cassette files ``paths`` name (folders recursively, globs), each once, in order."""
    seen: dict[str, None] = {}
    for path in vcr.expand(paths, CASSETTE_SUFFIXES):
        seen.setdefault(str(path), None)
    return list(seen)


def load(paths: Sequence[str], *, max_bytes: int = DEFAULT_MAX_CASSETTE_BYTES) -> Loaded:
    """Every cassette at ``paths``: native ones as :func:`files.load` reads them, VCR ones converted. In a
    folder or a glob, a file that is neither (a ``.json`` of something else) is listed as skipped."""
    loaded = Loaded()
    named = {str(p) for p in paths}
    for path in expand(paths):
        native = path in named or path.endswith(NATIVE_SUFFIX)  # a folder's other files are VCR or skipped
        if vcr.is_vcr_file(path) or not native:
            found = vcr.read_vcr([path])
            loaded.cassettes.append(from_vcr(Path(path), found.interactions))
            loaded.skipped.extend(found.skipped)
        else:
            loaded.cassettes.append(files.load(path, max_bytes=max_bytes))
    return loaded


def from_vcr(path: Path, interactions: Sequence[vcr.VcrInteraction]) -> files.Cassette:
    cassette = files.Cassette(path, untimed=True)
    for number, interaction in enumerate(interactions, start=1):
        # Made again from its line, as a native cassette's records are: the same objects, laid out alike.
        cassette.records.append(decode(encode(record_of(interaction, number))))
        cassette.lines.append(number)
        cassette.wheres.append(interaction.source)
    return cassette


def record_of(interaction: vcr.VcrInteraction, number: int) -> Record:
    """A VCR interaction as a native record: no timing, no request header, the reply's client headers."""
    stream = interaction.sse_events is not None
    events = [Event(ms=0.0, event=name, data=data) for name, data in interaction.sse_events or []]
    body = interaction.response_json
    text = None if stream or body is not None else interaction.response_body.decode("utf-8", errors="replace")
    return Record(
        version=1,
        id=f"vcr_{number:06d}",
        recorded_at=NO_TIMING_AT,
        api=api_for(interaction.method, interaction.path),
        request=RecordedRequest(method=interaction.method, path=interaction.path, body=interaction.request_json),
        response=RecordedResponse(
            status=interaction.status,
            headers=redaction.response_headers(interaction.response_headers.items()),
            stream=stream,
            headers_ms=0.0,
            duration_ms=0.0,
            events=events,
            body=None if stream else body,
            text=text,
        ),
    )
