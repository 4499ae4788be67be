"""The sandboxed agent's only way out: a relay to the model API that holds the key.

An agent's CLI runs in a sandbox without network (``--unshare-net``) and without the API key.
Inside, ``relay_bridge.py`` listens on ``127.0.0.1`` and passes each connection through a unix
socket bound into the sandbox; outside, this relay reads each HTTP request, replaces whatever
credentials it carries with the real ones, sends it to the real endpoint
(``ANTHROPIC_BASE_URL`` or the Anthropic API) and streams the answer back byte for byte (so
server-sent events arrive as they are produced). So:

* nothing the agent runs can reach any other host, on any port;
* the key never enters the sandbox: ``env`` in the agent's shell shows a placeholder;
* only the API's own paths are relayed (``/v1/...``); anything else gets 403.

The agent can still make model requests through the relay (as its CLI does) — that is the
access it is meant to have, and the run's budget caps what its calls may spend.
One request per upstream connection (``connection: close``): the relay stays a byte pipe that
never needs to parse a response. Threads, not the engine's event loop, so the relay also
serves the start-up check, which runs before the run's loop exists.
"""

from __future__ import annotations

import os
import socket
import socketserver
import ssl
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import structlog

log = structlog.get_logger("engine.agents.relay")

DEFAULT_UPSTREAM = "https://api.anthropic.com"
PLACEHOLDER_KEY = "sk-ant-relay-placeholder-the-real-key-stays-outside-the-sandbox"
_DROP = {"x-api-key", "authorization", "host", "connection", "proxy-authorization", "keep-alive"}
_MAX_HEAD = 64 * 1024


@dataclass(frozen=True)
class Upstream:
    scheme: str
    host: str
    port: int
    prefix: str

    @classmethod
    def parse(cls, url: str) -> Upstream:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"ANTHROPIC_BASE_URL must be an http(s) URL, not {url!r}")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return cls(parts.scheme, parts.hostname, port, parts.path.rstrip("/"))

    def connect(self, timeout: float) -> socket.socket:
        raw = socket.create_connection((self.host, self.port), timeout=timeout)
        if self.scheme == "https":
            return ssl.create_default_context().wrap_socket(raw, server_hostname=self.host)
        return raw


def credential_headers(env: Mapping[str, str]) -> dict[str, str]:
    """The headers that authenticate to the Anthropic API (or a gateway speaking it)."""
    headers: dict[str, str] = {}
    if env.get("ANTHROPIC_API_KEY"):
        headers["x-api-key"] = env["ANTHROPIC_API_KEY"]
    token = env.get("ANTHROPIC_AUTH_TOKEN") or env.get("CLAUDE_CODE_OAUTH_TOKEN")
    if token:
        headers["authorization"] = f"Bearer {token}"
    return headers


def relay_supported(env: Mapping[str, str]) -> str | None:
    """Why the relay cannot carry this set-up's traffic (None: it can)."""
    if any(env.get(f) for f in ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY")):
        return "a cloud provider signs its requests itself (Bedrock/Vertex/Foundry)"
    if any(env.get(p) for p in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy")):
        return "an HTTP proxy is configured"
    if not credential_headers(env):
        return "no API key or token to hold outside the sandbox"
    return None


def _read_head(conn: socket.socket, buffered: bytes) -> tuple[bytes, bytes] | None:
    data = buffered
    while b"\r\n\r\n" not in data:
        if len(data) > _MAX_HEAD:
            return None
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


class ApiRelay:
    """``with ApiRelay(env) as relay:`` … ``relay.socket_path`` … (one per engine process)."""

    def __init__(self, env: Mapping[str, str], *, timeout_s: float = 600.0) -> None:
        self.upstream = Upstream.parse(env.get("ANTHROPIC_BASE_URL") or DEFAULT_UPSTREAM)
        self._auth = credential_headers(env)
        self._timeout = timeout_s
        self.requests = 0
        self._dir = tempfile.mkdtemp(prefix="engine-relay-")  # short: unix socket paths max ~107 bytes
        os.chmod(self._dir, 0o755)
        self.socket_path = os.path.join(self._dir, "api.sock")
        relay = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                relay._serve(self.request)

        self._server = socketserver.ThreadingUnixStreamServer(self.socket_path, Handler)
        self._server.daemon_threads = True
        os.chmod(self.socket_path, 0o777)  # the sandbox's unprivileged uid connects to it
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.2},
                                        daemon=True, name="api-relay")
        self._thread.start()

    def __enter__(self) -> ApiRelay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        for path in (self.socket_path, self._dir):
            try:
                os.unlink(path) if path == self.socket_path else os.rmdir(path)
            except OSError:
                pass

    # --- one client connection ---------------------------------------------------------------

    def _serve(self, client: socket.socket) -> None:
        buffered = b""
        client.settimeout(self._timeout)
        try:
            while True:
                parsed = _read_head(client, buffered)
                if parsed is None:
                    return
                head, rest = parsed
                lines = head.decode("latin-1").split("\r\n")
                method, _, target = lines[0].partition(" ")
                path = target.rsplit(" ", 1)[0]
                headers = [(k.strip(), v.strip()) for k, _, v in (ln.partition(":") for ln in lines[1:]) if k]
                length = int(next((v for k, v in headers if k.lower() == "content-length"), "0") or 0)
                while len(rest) < length:
                    chunk = client.recv(65536)
                    if not chunk:
                        return
                    rest += chunk
                body, buffered = rest[:length], rest[length:]
                if not path.startswith("/v1/"):
                    client.sendall(b"HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                    return
                self.requests += 1
                self._forward(client, method, path, headers, body)
                return  # upstream answered with connection: close; so does the relay
        except OSError as exc:
            log.warning("relay_connection_failed", error=str(exc))
        finally:
            client.close()

    def _forward(self, client: socket.socket, method: str, path: str, headers: list[tuple[str, str]],
                 body: bytes) -> None:
        kept = [(k, v) for k, v in headers if k.lower() not in _DROP]
        out = [f"{method} {self.upstream.prefix}{path} HTTP/1.1", f"host: {self.upstream.host}",
               "connection: close", *(f"{k}: {v}" for k, v in kept), *(f"{k}: {v}" for k, v in self._auth.items())]
        try:
            upstream = self.upstream.connect(self._timeout)
        except OSError as exc:
            message = f"relay cannot reach {self.upstream.host}:{self.upstream.port}: {exc}".encode()
            client.sendall(b"HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\ncontent-length: "
                           + str(len(message)).encode() + b"\r\nconnection: close\r\n\r\n" + message)
            return
        with upstream:
            upstream.sendall(("\r\n".join(out) + "\r\n\r\n").encode("latin-1") + body)
            while True:
                chunk = upstream.recv(65536)
                if not chunk:
                    break
                client.sendall(chunk)
