"""A loopback TCP proxy between the store and the test server's unix socket that can cut a
connection at the worst moment of an append: right after forwarding the client's COMMIT, once the
server has answered that it committed, without passing that answer on (the acknowledgement is
lost: the client cannot know the outcome), or just before forwarding the COMMIT (the server rolls
the transaction back). No hook in production code: the store sees only a connection that broke.
"""

from __future__ import annotations

import socket
import threading
from pathlib import Path

# psycopg sends a transaction's end as a simple query; the server acknowledges it with CommandComplete.
COMMIT_QUERY = b"Q\x00\x00\x00\x0bCOMMIT\x00"
COMMIT_DONE = b"C\x00\x00\x00\x0bCOMMIT\x00"
AFTER_COMMIT = "after-commit"
BEFORE_COMMIT = "before-commit"


class CommitCuttingProxy:
    """``with CommitCuttingProxy(unix_socket) as proxy:`` connect to ``proxy.port`` on 127.0.0.1;
    ``proxy.arm(AFTER_COMMIT)`` cuts the next COMMIT's connection once."""

    def __init__(self, unix_socket: Path) -> None:
        self.target = str(unix_socket)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.cuts: list[str] = []  # what was cut, in order (AFTER_COMMIT only once the server committed)
        self._armed: str | None = None
        self._lock = threading.Lock()
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._closed = False

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}?sslmode=disable"

    def arm(self, mode: str) -> None:
        with self._lock:
            self._armed = mode

    def __enter__(self) -> CommitCuttingProxy:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closed = True
        try:
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread (close alone does not)
        except OSError:
            pass
        self.listener.close()
        for pair in self._pairs:
            _cut(pair)

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self._closed:
                client.close()
                return
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                server.connect(self.target)
            except OSError:
                client.close()  # the server is down: the client sees a refused connection
                server.close()
                continue
            pair = (client, server)
            self._pairs.append(pair)
            pending = threading.Event()  # set once a COMMIT went through that must not be acknowledged
            threading.Thread(target=self._upstream, args=(pair, pending), daemon=True).start()
            threading.Thread(target=self._downstream, args=(pair, pending), daemon=True).start()

    def _upstream(self, pair: tuple[socket.socket, socket.socket], pending: threading.Event) -> None:
        client, server = pair
        while data := _recv(client):
            if COMMIT_QUERY in data:
                with self._lock:
                    mode, self._armed = self._armed, None
                if mode == BEFORE_COMMIT:
                    self.cuts.append(BEFORE_COMMIT)
                    _cut(pair)
                    return
                if mode == AFTER_COMMIT:
                    pending.set()
            try:
                server.sendall(data)
            except OSError:
                break
        _cut(pair)

    def _downstream(self, pair: tuple[socket.socket, socket.socket], pending: threading.Event) -> None:
        client, server = pair
        while data := _recv(server):
            if pending.is_set() and COMMIT_DONE in data:
                self.cuts.append(AFTER_COMMIT)  # the server committed; its answer is dropped
                break
            try:
                client.sendall(data)
            except OSError:
                break
        _cut(pair)


def _recv(sock: socket.socket) -> bytes:
    try:
        return sock.recv(65536)
    except OSError:
        return b""


def _cut(pair: tuple[socket.socket, socket.socket]) -> None:
    for sock in pair:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        sock.close()
