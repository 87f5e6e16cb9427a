"""Cut a byte stream into Server-Sent Events as it arrives, each stamped with its arrival time.

The proxy passes every chunk to the client untouched and feeds a copy here. The framing is the
upstream's own (any chunk size, ``\\n`` or ``\\r\\n`` line ends, ``:`` keep-alive comments); what is kept
is each event's ``event:`` name and ``data:`` (several ``data:`` lines joined by ``\\n``, as the
SSE specification says), stamped with the time the chunk that completed it arrived.
"""

from __future__ import annotations

import codecs

from mockserver.cassettes.format import Event


class EventCutter:
    """Incremental SSE parser: :meth:`feed` chunks, collect :attr:`events`."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""

    def feed(self, chunk: bytes, ms: float) -> None:
        text = self._pending + self._decoder.decode(chunk)
        # A lone '\r' at the end may be the first half of '\r\n': keep it for the next chunk.
        keep_cr = text.endswith("\r")
        if keep_cr:
            text = text[:-1]
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        *blocks, rest = text.split("\n\n")
        self._pending = rest + ("\r" if keep_cr else "")
        for block in blocks:
            self._add(block, ms)

    def close(self, ms: float) -> None:
        """The stream ended: a last event not followed by a blank line still counts."""
        rest = self._pending + self._decoder.decode(b"", final=True)
        self._pending = ""
        rest = rest.replace("\r\n", "\n").replace("\r", "\n").strip("\n")
        if rest:
            self._add(rest, ms)

    def _add(self, block: str, ms: float) -> None:
        name: str | None = None
        data: list[str] = []
        for line in block.split("\n"):
            if not line or line.startswith(":"):
                continue  # a comment: keep-alives are the upstream's framing, not content
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
        if data or name is not None:
            self.events.append(Event(ms=round(ms, 3), event=name, data="\n".join(data)))
