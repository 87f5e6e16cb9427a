"""What is said and when: the reply engine, shared by every API family.

Owns the pacing schedule and its clocks (:mod:`.pacing`), SSE framing (:mod:`.streaming`),
ending the streams in flight when the server stops (:mod:`.stopping`),
text generation (:mod:`.generation`, :mod:`.lengths`), token counting (:mod:`.tokens`), reading a
conversation out of a request (:mod:`.conversation`), and structured output
(``structured/``: JSON Schema checks and instances, tool arguments).

May import: config, state, errors. Knows nothing of accounts, HTTP or the harness.

Read first: :mod:`.pacing`, then :mod:`.generation` (and :mod:`.lengths`, how long an answer runs).
"""
