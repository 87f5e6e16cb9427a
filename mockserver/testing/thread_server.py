"""The uvicorn server :class:`~mockserver.testing.server.MockServer` runs in its thread, which stops as
soon as it is asked to.

uvicorn's own server notices ``should_exit`` on its next tick (every 0.1 s), and its shutdown then
waits 0.1 s for the connections to notice they should close, before it waits for them in 0.1 s steps.
A test session stops its server once at its end, and these waits were up to 0.2 s of every session
that used the fixture, with nothing to wait for: here :meth:`ThreadServer.stop` wakes the loop at
once, and the shutdown waits for the connections and tasks still open in steps of
:data:`SHUTDOWN_POLL_S`. What it waits for, and in which order, is uvicorn's.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket

import uvicorn

from mockserver.server.app import UvicornServer

TICK_S = 0.1  # uvicorn's tick: the Date header is updated every 10 of them
SHUTDOWN_POLL_S = 0.005


class _PromptShutdown(uvicorn.Server):
    """uvicorn's shutdown, polling in :data:`SHUTDOWN_POLL_S` steps instead of 0.1 s ones."""

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        try:
            await asyncio.wait_for(self._in_flight_done(), timeout=self.config.timeout_graceful_shutdown)
        except TimeoutError:
            for task in self.server_state.tasks:
                task.cancel(msg="Task cancelled, timeout graceful shutdown exceeded")
        if not self.force_exit:
            await self.lifespan.shutdown()

    async def _in_flight_done(self) -> None:
        state = self.server_state
        while (state.connections or state.tasks) and not self.force_exit:
            await asyncio.sleep(SHUTDOWN_POLL_S)


class ThreadServer(UvicornServer, _PromptShutdown):
    """:class:`~mockserver.server.app.UvicornServer` (which ends the replies and streams in flight
    first), woken by :meth:`stop` rather than on its next tick."""

    _wake: asyncio.Event | None = None

    async def main_loop(self) -> None:
        self._wake = asyncio.Event()
        counter = 0
        should_exit = await self.on_tick(counter)
        while not should_exit:
            counter = (counter + 1) % 864000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), TICK_S)
            should_exit = await self.on_tick(counter)

    def stop(self) -> None:
        """Ask the server to stop, from any thread: it begins its shutdown at once."""
        self.should_exit = True
        loop, wake = self.loop, self._wake
        if loop is not None and wake is not None:
            with contextlib.suppress(RuntimeError):  # the loop has closed already
                loop.call_soon_threadsafe(wake.set)
