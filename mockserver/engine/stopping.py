"""Ending the streams in flight when the server stops: what the final event of each one says.

Every open stream is in the server's
:class:`~mockserver.engine.scheduler.StreamScheduler`. When a stopping server's grace
period is over, :meth:`~mockserver.engine.scheduler.StreamScheduler.end_all` ends each
of them cleanly: one error event in its API's framing
(:meth:`mockserver.engine.dialects.Dialect.shutdown_event`), then the end of the body. Each
stream's producer is closed, so its ``finally`` blocks run: its capacity slot is given back and
the journal records the exchange. A stream that opens after that gets the same event at once.
(Held non-streaming replies have their own registry, :mod:`mockserver.service.inflight`.) A stream
that runs past the wall-clock limit on one reply ends the same way, with
:meth:`~mockserver.engine.dialects.Dialect.time_limit_event`.
"""

from __future__ import annotations

SHUTDOWN_CODE = "server_shutting_down"
SHUTDOWN_MESSAGE = "The server is shutting down and could not finish this reply. Please retry the request."
TIME_LIMIT_CODE = "reply_time_limit"


def time_limit_message(limit_s: float) -> str:
    return (
        f"This reply took longer than the server's limit of {limit_s:g} s per reply "
        "(max_reply_seconds, MOCKSERVER_MAX_REPLY_SECONDS). Lower time_scale or raise the limit."
    )
