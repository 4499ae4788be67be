"""Inside the agent's sandbox: a loopback port that leads to the model-API relay, then the CLI.

    python -I -S relay_bridge.py <port> <unix socket> -- <command...>

The sandbox has no network, only its own loopback. This bridge listens on ``127.0.0.1:<port>``
and pipes every connection to the relay's unix socket (bound into the sandbox), starts the
command (the Claude CLI, whose ``ANTHROPIC_BASE_URL`` points at the port) and exits with its
status when it ends. Standard library only: it runs with the sandbox's read-only Python.
"""

from __future__ import annotations

import os
import selectors
import socket
import sys
import threading


def _pipe(a: socket.socket, b: socket.socket) -> None:
    sel = selectors.DefaultSelector()
    sel.register(a, selectors.EVENT_READ, (a, b))  # data: (from, to)
    sel.register(b, selectors.EVENT_READ, (b, a))
    try:
        while True:
            for key, _ in sel.select():
                source, sink = key.data
                data = source.recv(65536)
                if not data:
                    return
                sink.sendall(data)
    except OSError:
        return
    finally:
        a.close()
        b.close()


def _serve(listener: socket.socket, unix_path: str) -> None:
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        relay = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            relay.connect(unix_path)
        except OSError:
            conn.close()
            relay.close()
            continue
        threading.Thread(target=_pipe, args=(conn, relay), daemon=True).start()


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        sys.stderr.write("usage: relay_bridge.py PORT UNIX_SOCKET -- COMMAND [ARGS...]\n")
        return 2
    port, unix_path, command = int(argv[0]), argv[1], argv[3:]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    threading.Thread(target=_serve, args=(listener, unix_path), daemon=True).start()
    child = os.fork()
    if child == 0:
        listener.close()
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            sys.stderr.write(f"relay bridge: cannot run {command[0]}: {exc}\n")
            os._exit(127)
    os.close(0)
    os.close(1)
    _, status = os.waitpid(child, 0)
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
