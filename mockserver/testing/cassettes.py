"""The pytest plugin's record modes: one cassette per test, replayed, recorded, or both.

The modes are pytest-recording's and VCR's words (``--mockserver-record-mode``):

====== ===================================================================================
none   only replay: a test whose cassette exists is answered from it; nothing is recorded
once   replay a cassette that exists; record the whole test when it is missing
new    replay what the cassette holds; record what it does not (appended)
all    record everything again (the cassette is replaced)
====== ===================================================================================

A test's cassette is ``cassettes/<test module>/<test name>.jsonl`` beside its file, or the one
``@pytest.mark.mockserver(cassette="shared.jsonl")`` names (relative to the test file); a VCR cassette
(``.yaml``: vcrpy's, pytest-recording's, at the same place or named) is replayed as it is. Replaying,
the mockserver serves it (``replay:``, instant timing unless the test sets another). Recording,
the test's clients go through a :class:`~mockserver.testing.recorder.RecordingProxy` to
``--mockserver-upstream`` with the credentials they send: ``OPENAI_BASE_URL`` and
``ANTHROPIC_BASE_URL`` point at the proxy and ``OPENAI_API_KEY`` is left as it is.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

RecordMode = Literal["none", "once", "new", "all"]
RECORD_MODES: tuple[RecordMode, ...] = ("none", "once", "new", "all")
CASSETTE_DIR = "cassettes"
NATIVE_SUFFIX = ".jsonl"
_UNSAFE = re.compile(r"[^\w.\-\[\]]+")


def default_cassette(test_file: Path, test_name: str) -> Path:
    """The test's native cassette; or, when only that exists, the VCR cassette pytest-recording keeps at
    the same place (``cassettes/<module>/<test>.yaml``)."""
    native = test_file.parent / CASSETTE_DIR / test_file.stem / f"{_UNSAFE.sub('_', test_name)}.jsonl"
    recorded_by_vcr = native.with_suffix(".yaml")
    return recorded_by_vcr if not native.exists() and recorded_by_vcr.exists() else native


def records(mode: RecordMode, cassette: Path, *, begun_here: bool = False) -> bool:
    """Whether this test runs through the recording proxy. ``begun_here``: this run began the cassette
    (a cassette shared by several tests is recorded by all of them, under ``once`` too). A VCR
    cassette is only replayed: recording writes the native format, into a ``.jsonl`` cassette."""
    if mode == "none" or (cassette.suffix != NATIVE_SUFFIX and cassette.exists()):
        return False
    if mode == "once":
        return begun_here or not cassette.exists()
    return True


def prepare(mode: RecordMode, cassette: Path) -> None:
    """``all`` starts the cassette again, once per run; the others add to it."""
    if mode == "all" and cassette.exists():
        cassette.unlink()
