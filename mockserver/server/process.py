"""Running the server as a process: uvicorn, with a clean stop.

On the first SIGTERM or SIGINT the server stops accepting connections and lets the
replies in flight run for ``Settings.shutdown_grace`` seconds. When the grace period
is over, each reply still running is ended cleanly (a stream with one OpenAI-shaped
error event, a held body with a retryable 503; see :mod:`mockserver.engine.stopping`),
its capacity slot is given back, and the process exits with status 0. A second signal
cuts the grace period short: the replies are ended at once. No traceback either way.

``docker stop`` sends SIGTERM and kills ten seconds later; the default grace of five
seconds leaves time for the final events to go out.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from types import FrameType

import uvicorn

from mockserver.api.asgi.collector import settle_heap
from mockserver.operations import metrics
from mockserver.server_state import ServerState

logger = logging.getLogger("uvicorn.error")  # uvicorn's own lines: same format and level

POLL_S = 0.02
# After the replies were asked to end: how long they get to send their final event before
# their tasks are cancelled (a reply blocked writing to a client that stopped reading).
FINAL_EVENT_TIMEOUT_S = 0.5
APP_DEPTH = 8  # how many wrappers (uvicorn's proxy-headers middleware, ...) to look through for the app


class GracefulServer(uvicorn.Server):
    """A ``uvicorn.Server`` whose stop ends the replies in flight cleanly after a grace period."""

    def __init__(self, config: uvicorn.Config, state: ServerState | None = None) -> None:
        super().__init__(config)
        self.mock_state = state  # None: found in the app uvicorn loads (a worker process builds its own)
        self.held: list[int] = []  # stop signals noted before uvicorn took them over (cli.hold_stop_signals)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        settle_heap()
        if _stop_pending or self.held:  # asked to stop while it was starting
            self.should_exit = True
        state = self.mock_state or self.find_state()
        if state is not None and state.settings.port_file and self.servers:
            port = self.servers[0].sockets[0].getsockname()[1]
            Path(state.settings.port_file).write_text(f"{port}\n")

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        # uvicorn forces an exit only on a second SIGINT, and re-raises the signal once it has
        # stopped (so the process dies of it); here any second signal forces, and a clean stop exits 0.
        if self.should_exit:
            self.force_exit = True
        self.should_exit = True

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()  # idle keep-alive connections close; busy ones close after their reply
        state = self.mock_state or self.find_state()
        grace = state.settings.shutdown_grace if state is not None else 0.0
        loop = asyncio.get_running_loop()
        if self.server_state.tasks and not self.force_exit:
            logger.info(
                "Stopping: %d request(s) in flight get up to %gs to finish (signal again to stop now)",
                len(self.server_state.tasks),
                grace,
            )
        deadline = loop.time() + grace
        while self.server_state.tasks and not self.force_exit and loop.time() < deadline:
            await asyncio.sleep(POLL_S)
        if state is not None:
            ended = state.replies.end_all("shutdown") + state.streams.end_all()
            if ended:
                logger.info("Stopping: ending %d reply(ies) still in flight", ended)
        deadline = loop.time() + FINAL_EVENT_TIMEOUT_S
        while self.server_state.tasks and loop.time() < deadline:
            await asyncio.sleep(POLL_S)
        for task in self.server_state.tasks:
            task.cancel()
        # Even when forced: the app's shutdown is quick, and skipping it leaves uvicorn's lifespan task to be
        # cancelled when the loop closes, which prints a traceback.
        await self.lifespan.shutdown()
        if state is not None:
            await state.close()  # the shared store's connection and its lease renewal

    def find_state(self) -> ServerState | None:
        """The state of the app this server runs (uvicorn may wrap it in its own middleware)."""
        app: object = getattr(self.config, "loaded_app", None)
        for _ in range(APP_DEPTH):
            state = getattr(getattr(app, "state", None), "mock", None)
            if isinstance(state, ServerState):
                return state
            app = getattr(app, "app", None)
        return None


WORKER_POLL_S = 0.1
EARLY_DEATH_S = 5.0  # a worker that dies this soon after starting would only die again: stop instead
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


# Stop signals a worker received before its server could take them (while it was still importing
# and loading): the server stops as soon as it has started.
_stop_pending: list[int] = []


def _run_worker(config: uvicorn.Config, sockets: list[socket.socket]) -> None:
    """One worker process: its own process group (a Ctrl-C in the terminal reaches the supervisor,
    which passes it on once), uvicorn's logging, then a :class:`GracefulServer` on the shared socket.

    A worker never outlives its supervisor: if the supervisor dies (killed, out of memory), the
    worker stops itself as if it had been sent SIGTERM."""
    for stop_signal in STOP_SIGNALS:
        signal.signal(stop_signal, lambda received, frame: _stop_pending.append(received))
    os.setpgid(0, 0)
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_stop_with, args=(parent.sentinel,), name="supervisor-watch", daemon=True).start()
    config.configure_logging()
    GracefulServer(config).run(sockets=sockets)


def _stop_with(supervisor: int) -> None:
    """Wait until the supervisor process is gone, then stop this worker as SIGTERM would."""
    multiprocessing.connection.wait([supervisor])
    logger.warning("The supervisor is gone; stopping worker [%s]", os.getpid())
    os.kill(os.getpid(), signal.SIGTERM)


class Workers:
    """``mockserver serve --workers N``: N worker processes serving one listening socket.

    Each worker is a :class:`GracefulServer` that builds its own app (``config.app`` is a factory),
    so a stop behaves as with one process: the supervisor passes each SIGTERM or SIGINT on to every
    worker (the first starts their grace period, a second ends it), waits for them, and exits 0.
    A worker that dies on its own is replaced. Workers are started with ``spawn``, as uvicorn's
    own supervisor does, so nothing of the parent's event loop or threads is inherited.

    The workers' metrics go to a fresh directory made for the run (:func:`metrics.shared_directory`),
    so ``GET /metrics`` on any worker reports them all; each worker seen to exit is forgotten there
    at once (its live gauges stop counting), and the directory is removed when the run ends.
    """

    def __init__(self, config: uvicorn.Config, sockets: list[socket.socket], count: int) -> None:
        self.config = config
        self.sockets = sockets
        self.count = count
        self.signals: list[int] = []
        self._context = multiprocessing.get_context("spawn")
        self.processes: list[multiprocessing.process.BaseProcess] = []
        self._started_at: dict[int, float] = {}
        self.metrics_dir: str | None = None  # where the workers' metrics are, while they run
        self._forgotten: set[int] = set()

    def _start_one(self) -> multiprocessing.process.BaseProcess:
        process = self._context.Process(target=_run_worker, args=(self.config, self.sockets), name="mockserver-worker")
        process.start()
        self._started_at[id(process)] = time.monotonic()
        logger.info("Started worker process [%s]", process.pid)
        return process

    def run(self, held: list[int] | None = None) -> int:
        """Supervise the workers until they stop; the run's exit status. ``held``: stop signals noted
        while starting (:func:`mockserver.cli.hold_stop_signals`), and where later ones are noted."""
        if held is not None:
            self.signals = held
        for stop_signal in STOP_SIGNALS:
            signal.signal(stop_signal, lambda received, frame: self.signals.append(received))
        if self.signals:  # told to stop before a worker started
            return 0
        with metrics.shared_directory() as self.metrics_dir:
            return self._supervise()

    def _forget_exited(self) -> None:
        """Forget, in the metrics, each worker that exited since the last look (once each)."""
        for process in self.processes:
            pid = process.pid
            if pid is not None and pid not in self._forgotten and not process.is_alive() and self.metrics_dir:
                metrics.forget_process(pid, self.metrics_dir)
                self._forgotten.add(pid)

    def _supervise(self) -> int:
        self.processes = [self._start_one() for _ in range(self.count)]
        stopping = failed = False
        while any(p.is_alive() for p in self.processes):
            self._forget_exited()
            while self.signals:
                received = self.signals.pop(0)
                stopping = True
                for process in self.processes:
                    if process.is_alive() and process.pid is not None:
                        os.kill(process.pid, received)
            if not stopping:
                for index, process in enumerate(self.processes):
                    if process.is_alive():
                        continue
                    if time.monotonic() - self._started_at[id(process)] < EARLY_DEATH_S:
                        print(f"mockserver: worker process {process.pid} exited during start-up "
                              f"(status {process.exitcode}); stopping", file=sys.stderr)  # fmt: skip
                        self.signals.append(signal.SIGTERM)
                        failed = True
                        break
                    logger.warning("Worker process [%s] died (exit %s); starting another", process.pid,
                                   process.exitcode)  # fmt: skip
                    self._forget_exited()  # before it leaves the list
                    self.processes[index] = self._start_one()
            time.sleep(WORKER_POLL_S)
        for process in self.processes:
            process.join()
        self._forget_exited()
        # A clean stop exits 0 in every worker; anything else (killed, crashed) is the run's status too.
        died = any(process.exitcode != 0 for process in self.processes)
        return 1 if failed or died else 0
