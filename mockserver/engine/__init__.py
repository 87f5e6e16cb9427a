"""What is said and when: the reply engine, shared by every API family.

Owns the pacing schedule and its clocks (:mod:`.pacing`), SSE framing and the items a stream is made
of (:mod:`.streaming`), each API family's framing of its stream (:mod:`.dialects`: token, error,
shutdown events, and the status and body of its error replies), the per-server stream scheduler that
plays every open stream on one timer and ends them all when the server stops (:mod:`.scheduler`; one
stream's state, :mod:`.active_stream`; when its events may go out, :mod:`.catch_up`; writing and
ending it, :mod:`.stream_writes`; how late streams run, :mod:`.lateness`; :mod:`.stopping`), text
generation (:mod:`.generation`, :mod:`.lengths`), token counting (:mod:`.tokens`), reading a
conversation out of a request (:mod:`.conversation`), structured output (``structured/``: JSON
Schema checks and instances, tool arguments), and what keeps a large body from holding the event
loop: its parse in pieces (:mod:`.json_in_pieces`, :mod:`.jsonbody`) and work over a long list in turns
(:mod:`.in_turns`); the garbage collector's pauses are :mod:`mockserver.api.asgi`'s.

May import: config, state, errors. Knows nothing of accounts, HTTP or the harness: no starlette or
fastapi import (a ``forbidden`` contract of ``lint-imports``); the HTTP reply that plays a stream is
:class:`mockserver.api.sse.EventStreamResponse`.

Read first: :mod:`.pacing`, then :mod:`.scheduler`, then :mod:`.generation` (and :mod:`.lengths`,
how long an answer runs).
"""
