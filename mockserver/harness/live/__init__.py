"""What the dashboard (``GET /_mock/ui``) shows live: the streams in flight, accounts with their budget
left, and the speed check.

:mod:`.streams` keeps the streams being played beside their exchange and schedule and reads, when
asked, how far each one has got (tokens sent, achieved rate, TTFT, lateness) from the stream
scheduler's own state, so the path of a token pays nothing for it. :mod:`.accounts` reads what each
key may do and how much of its rate-limit windows is left. :mod:`.speed_check` runs the
announcement's measurement against the server itself. :mod:`.throttle` merges updates to a few per
second.

May import: service, engine, config, state, errors (the harness's own layer rules).

Read first: :mod:`.streams`.
"""
