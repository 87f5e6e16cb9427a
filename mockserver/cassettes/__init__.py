"""Cassettes: recorded exchanges with a real API, as reviewable JSON Lines files.

A cassette is one file, one exchange per line (:mod:`.format`): the request as the client sent
it, less its credentials, and the reply with every SSE event and its offset in milliseconds from
when the request was sent. :mod:`.files` reads a cassette (a torn last record, left by a crash, is
dropped with a warning; any other bad record stops the load with ``file:line`` and why) and appends
to one safely; :mod:`.sse` cuts a byte stream into events as it arrives; :mod:`.redaction` keeps
credentials and the fixture's ``redact:`` patterns out; :mod:`.figures` reads a record's model,
tier, tokens and timing; :mod:`.matching` finds the recording a request matches.

May import: config, state and errors.

Read first: :mod:`.format`.
"""
