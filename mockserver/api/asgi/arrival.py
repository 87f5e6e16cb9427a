"""When a request arrived: when the kernel received it, not when the app got round to it.

A reply's schedule starts at the request's arrival (``Admission.start_time``), so the
configured TTFT is what a client measures. But the app only sees a request when the event
loop runs its task, which can be much later than its bytes came in: the loop reads sockets
between batches of work, so when a hundred requests arrive together, the last ones are read
only once the first ones were routed, parsed and planned (about half a millisecond each),
and their TTFT would start some 50 ms late. Under a burst of 250 streams, some requests
were read 400 ms after they arrived.

So the middleware asks the kernel how long ago the connection last received data
(``TCP_INFO``'s ``tcpi_last_data_recv``, on Linux): that is how long the request waited
before the app saw it, at the kernel's tick resolution (1 to 10 ms; 4 ms on most machines).
The exchange is dated that much earlier, and a burst is planned within its TTFT instead of
adding to it. Elsewhere (not Linux, not TCP, a test client) the wait is 0 and a request is
dated when the app sees it, as before. A request that came while the server was still
starting (the socket listens before the app is built) waits from when the app was ready.

Only the server's real clock (:class:`~mockserver.engine.pacing.MonotonicClock`) is moved
back; a test's fake clock dates a request by its own ``now()``.
"""

from __future__ import annotations

import socket
import struct
import time
from typing import Any

from starlette.types import Scope

from mockserver.engine.pacing import Clock, MonotonicClock

WAITED = "waited_s"  # scope["state"] key: seconds the request waited in the kernel before the app saw it
MAX_WAIT_S = 60.0  # a larger figure is not a request waiting to be read: ignored
_TCP_INFO = getattr(socket, "TCP_INFO", None)  # Linux only
_TCP_INFO_BYTES = 104  # enough for every field up to tcpi_last_ack_recv
_LAST_DATA_RECV = struct.Struct("=I")  # tcpi_last_data_recv: milliseconds since the last data arrived
_LAST_DATA_RECV_OFFSET = 52  # 8 bytes of u8 fields, then 11 u32 before it (struct tcp_info, linux/tcp.h)


def kernel_wait(transport: Any, ready_at: float | None = None) -> float:
    """Seconds since ``transport``'s socket last received data; 0.0 when the kernel can't say.

    ``ready_at`` (``time.monotonic()``) is when the app was ready to serve: a request that came
    while the server was still starting is counted as waiting from then, not before. Otherwise
    its whole reply would be overdue at once, and a stream would arrive in one burst.
    """
    if _TCP_INFO is None or transport is None:
        return 0.0
    try:
        sock = transport.get_extra_info("socket")
        raw = sock.getsockopt(socket.IPPROTO_TCP, _TCP_INFO, _TCP_INFO_BYTES)
        (milliseconds,) = _LAST_DATA_RECV.unpack_from(raw, _LAST_DATA_RECV_OFFSET)
    except (AttributeError, OSError, struct.error, TypeError):
        return 0.0
    waited: float = milliseconds / 1000
    if ready_at is not None:
        waited = min(waited, time.monotonic() - ready_at)
    return waited if 0 < waited <= MAX_WAIT_S else 0.0


def arrival_time(scope: Scope, clock: Clock) -> float:
    """When the request in ``scope`` arrived, on ``clock``: ``now()`` less the kernel wait, if known."""
    now = clock.now()
    waited: float = scope.get("state", {}).get(WAITED, 0.0)
    if waited <= 0 or not isinstance(clock, MonotonicClock):
        return now
    return now - waited
