"""A TCP port that counts who connects: tests that show an agent cannot reach the network expect
it to stay at zero."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def counting_listener(address: str) -> Iterator[tuple[int, list[str]]]:
    """Listen on ``address`` (e.g. ``127.0.0.1``, or ``0.0.0.0`` for every address of the host);
    yield the port and the list of peers that connected."""
    server = socket.socket()
    server.bind((address, 0))
    server.listen(8)
    server.settimeout(0.2)
    hits: list[str] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, addr = server.accept()
            except OSError:
                continue
            hits.append(str(addr))
            conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], hits
    finally:
        stop.set()
        thread.join(timeout=2)
        server.close()
