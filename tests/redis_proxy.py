"""A TCP proxy in front of a real Redis that can lose one reply: for the tests of calls the Redis
client retries after a dropped connection, which Redis may have run already."""

from __future__ import annotations

import selectors
import socket
import threading
from types import TracebackType

BUFFER = 65536


class DroppingProxy:
    """Forwards connections on a free local port to Redis on ``target_port``. :meth:`drop_reply_to`
    arms it: the next command whose bytes contain ``marker`` goes to Redis (which runs it), and then,
    instead of its reply, the client's connection is closed. ``dropped`` counts the replies lost."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._marker: bytes | None = None
        self._hold: bytes | None = None
        self._held: list[tuple[socket.socket, bytes]] = []
        self._release = threading.Event()
        self.holding = threading.Event()  # set once a command is being held
        self.dropped = 0
        self._stopping = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._serve, name="redis-proxy", daemon=True)

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def drop_reply_to(self, marker: bytes) -> None:
        with self._lock:
            self._marker = marker

    def hold(self, marker: bytes) -> None:
        """Arm it: the next command whose bytes contain ``marker`` waits, unsent, until :meth:`release`."""
        with self._lock:
            self._hold = marker

    def release(self) -> None:
        self._release.set()

    def _serve(self) -> None:
        selector = selectors.DefaultSelector()
        selector.register(self._listener, selectors.EVENT_READ)
        peers: dict[socket.socket, socket.socket] = {}
        doomed: set[socket.socket] = set()  # upstreams whose next reply is to be lost
        while not self._stopping:
            if self._release.is_set() and self._held:
                for upstream, data in self._held:
                    upstream.sendall(data)
                self._held.clear()
            for key, _ in selector.select(timeout=0.01):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                if sock is self._listener:
                    client, _ = self._listener.accept()
                    upstream = socket.create_connection(("127.0.0.1", self.target_port))
                    peers[client], peers[upstream] = upstream, client
                    selector.register(client, selectors.EVENT_READ)
                    selector.register(upstream, selectors.EVENT_READ)
                    continue
                other = peers.get(sock)
                if other is None:
                    continue
                data = sock.recv(BUFFER)
                if data and sock in doomed:  # Redis ran the command: lose its reply with the connection
                    data = b""
                    with self._lock:
                        self.dropped += 1
                if data and self._marker is not None and self._marker in data:
                    with self._lock:
                        self._marker = None
                    doomed.add(other)
                if data and self._hold is not None and self._hold in data:
                    with self._lock:
                        self._hold = None
                    self._held.append((other, data))
                    self.holding.set()
                    continue
                if not data:
                    for end in (sock, other):
                        selector.unregister(end)
                        end.close()
                        peers.pop(end, None)
                        doomed.discard(end)
                    continue
                other.sendall(data)
        for sock in list(peers):
            sock.close()
        selector.close()

    def __enter__(self) -> DroppingProxy:
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stopping = True
        self._thread.join(5)
        self._listener.close()
