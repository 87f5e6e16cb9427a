"""Reading and appending cassette files safely.

- :func:`load` reads every record. A last line cut short by a crash (no final newline, not a whole
  record) is dropped with a warning; any other bad line raises :class:`CassetteError` with
  ``file:line`` and why, so a server never starts on a record it could misread.
- :class:`CassetteWriter` appends one whole record per write, under a lock (threads) and an
  ``flock`` (processes), so concurrent exchanges never interleave; before its first write it cuts
  a torn last record away, and it refuses to grow the file past ``max_bytes``.
"""

from __future__ import annotations

import fcntl
import os
import stat
import threading
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from mockserver.cassettes.format import Record, RecordError, decode, encode
from mockserver.cassettes.limits import DEFAULT_MAX_CASSETTE_BYTES


class CassetteError(ValueError):
    """A cassette that cannot be used; the message is one line: ``file:line: why``."""


class CassetteFull(CassetteError):
    """Appending the record would take the cassette past its size bound."""


class TornRecordWarning(UserWarning):
    """The cassette's last record was cut short (a crash while writing) and was dropped."""


@dataclass
class Cassette:
    path: Path
    records: list[Record] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)  # the line of each record, for messages that name it
    untimed: bool = False  # converted from a cassette that holds no timing (VCR): every offset is 0
    wheres: list[str] = field(default_factory=list)  # where each record was read, when not file:line

    def where(self, index: int) -> str:
        """Where the ``index``-th record was read, for messages: ``file:line`` or the VCR ``file#n``."""
        return self.wheres[index] if self.wheres else f"{self.path}:{self.lines[index]}"


def load(path: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_CASSETTE_BYTES) -> Cassette:
    """Every record of the cassette at ``path``: a regular file of at most ``max_bytes``."""
    source = Path(path)
    data = _read(source, max_bytes)
    cassette = Cassette(source)
    lines = data.split(b"\n")
    last = len(lines) - 1  # the piece after the final newline: empty unless the file was torn
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            cassette.records.append(decode(line))
            cassette.lines.append(number)
        except RecordError as exc:
            if number - 1 == last:
                warnings.warn(
                    f"{source}:{number}: the last record is incomplete (a crash while writing?) and was dropped",
                    TornRecordWarning,
                    stacklevel=2,
                )
                continue
            raise CassetteError(f"{source}:{number}: {exc}") from None
    return cassette


def check(path: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_CASSETTE_BYTES) -> list[str]:
    """Every problem in a cassette, one line each (``file:line: why``); empty when it is valid."""
    source = Path(path)
    try:
        data = _read(source, max_bytes)
    except CassetteError as exc:
        return [str(exc)]
    problems = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            decode(line)
        except RecordError as exc:
            problems.append(f"{source}:{number}: {exc}")
    return problems


def _read(source: Path, max_bytes: int) -> bytes:
    """The file's bytes; a device, a pipe or a file past the bound is refused before anything is read."""
    try:
        info = source.stat()
        if not stat.S_ISREG(info.st_mode):
            raise CassetteError(f"{source}: not a regular file")
        if info.st_size > max_bytes:
            raise CassetteError(f"{source}: {info.st_size} bytes, past the bound of {max_bytes} (--max-cassette-bytes)")
        return source.read_bytes()
    except OSError as exc:
        raise CassetteError(f"{source}: cannot read it: {exc.strerror or exc}") from None


class CassetteWriter:
    """Appends records to one cassette file; safe to share between threads and processes."""

    def __init__(self, path: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_CASSETTE_BYTES) -> None:
        self.path = Path(path)
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._checked = False

    def append(self, record: Record) -> None:
        line = encode(record)
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                size = self._cut_torn_tail(fd)
                if size + len(line) > self.max_bytes:
                    raise CassetteFull(
                        f"{self.path}: recording this exchange ({len(line)} bytes) would take the cassette past "
                        f"its bound of {self.max_bytes} bytes (--max-cassette-bytes); it was not recorded"
                    )
                os.write(fd, line)
            finally:
                os.close(fd)  # closing releases the flock

    def _cut_torn_tail(self, fd: int) -> int:
        """The file's size, after dropping a last line with no newline (a record torn by a crash)."""
        size = os.fstat(fd).st_size
        if self._checked or size == 0:
            return size
        self._checked = True
        tail_start = max(0, size - 1)
        if os.pread(fd, 1, tail_start) == b"\n":
            return size
        data = os.pread(fd, size, 0)
        cut = data.rfind(b"\n") + 1
        warnings.warn(
            f"{self.path}: the last record is incomplete (a crash while writing?) and was cut before appending",
            TornRecordWarning,
            stacklevel=3,
        )
        os.ftruncate(fd, cut)
        return cut
