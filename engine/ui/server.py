"""Serving the application with uvicorn on a socket bound here (so ``--port 0`` works and the
printed URL names the real port)."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path

from engine.ui.app import UiApp
from engine.ui.security import check_bind, is_loopback
from engine.ui.source import open_source


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise OSError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket, host: str, token: str | None) -> str:
    port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/" + (f"?token={token}" if token else "")


def serve(db: str | Path | None, *, host: str, port: int, token: str | None, announce: Callable[[str], None],
          interval: float = 0.25, note: Callable[[str], None] = lambda _: None) -> None:
    """Check the address, open the store read-only, bind, announce the URL (then ``note`` that the
    store is empty yet, when it is), serve until stopped."""
    import uvicorn

    check_bind(host, token)
    source = open_source(db)
    sock = bind(host, port)
    app = UiApp(source, db_arg=str(db) if db else "", interval=interval)
    config = uvicorn.Config(app.asgi(token=token, loopback=is_loopback(host)), log_level="warning",
                            timeout_graceful_shutdown=1, lifespan="on")
    announce(url_of(sock, host, token))
    pending = source.pending()
    if pending:
        note(pending)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
        source.close()
