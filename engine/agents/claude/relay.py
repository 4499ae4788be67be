"""The sandboxed agent's only way out: a relay to the model API that holds the key.

An agent's CLI runs in a sandbox without network (``--unshare-net``) and without the API key.
Inside, ``relay_bridge.py`` listens on ``127.0.0.1`` and passes each connection through a unix
socket bound into the sandbox; outside, this relay reads each HTTP request, replaces whatever
credentials it carries with the real ones, sends it to the real endpoint
(``ANTHROPIC_BASE_URL`` or the Anthropic API) and streams the answer back byte for byte (so
server-sent events arrive as they are produced). So:

* nothing the agent runs can reach any other host, on any port;
* the key never enters the sandbox: ``env`` in the agent's shell shows a placeholder;
* the relay is the meter (``metering.py``): each agent call gets its own socket, bound into its
  own sandbox only, so every request is the call's whoever in the sandbox sent it (the CLI or a
  command its shell runs); it is admitted against the call's cap, its answer's usage is read as
  it streams and priced, and the call's recorded cost is what the relay metered. Only the paths
  the CLI uses are relayed; a request outside a call in flight finds no socket, or is refused.

One request per upstream connection (``connection: close``), and ``accept-encoding: identity``
so the answer can be read as it passes. Threads, not the engine's event loop, so the relay also
serves the start-up check, which runs before the run's loop exists.
"""

from __future__ import annotations

import itertools
import os
import shutil
import socket
import ssl
import tempfile
import threading
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import structlog

from engine.agents.claude.metering import CallMeter, Refusal, ResponseUsage
from engine.agents.claude.reading import MeterReading
from events.domain import ModelPrice

log = structlog.get_logger("engine.agents.relay")

DEFAULT_UPSTREAM = "https://api.anthropic.com"
PLACEHOLDER_KEY = "sk-ant-relay-placeholder-the-real-key-stays-outside-the-sandbox"
_DROP = {"x-api-key", "authorization", "host", "connection", "proxy-authorization", "keep-alive",
         "content-length", "transfer-encoding", "accept-encoding", "expect"}
_MAX_HEAD = 64 * 1024
_MAX_BODY = 64 * 1024 * 1024
SETTLE_GRACE_S = 2.0  # how long a call's end waits for answers already read to be settled


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


def _cut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


class RelayedCall:
    """One agent call's way to the model: a unix socket (bound into its sandbox) and its meter."""

    def __init__(self, relay: ApiRelay, meter: CallMeter, socket_path: str) -> None:
        self.meter = meter
        self.socket_path = socket_path
        self._relay = relay
        self._open: set[socket.socket] = set()  # the connections of requests in flight, both ends
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(socket_path)
        os.chmod(socket_path, 0o777)  # the sandbox's unprivileged uid connects to it
        self._listener.listen(16)
        self._listener.settimeout(0.2)
        self._thread = threading.Thread(target=self._accept, daemon=True, name=f"api-relay-{meter.label}")
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            if self._stop.is_set():
                conn.close()
                return
            self.track(conn)
            threading.Thread(target=self._relay.serve, args=(conn, self.meter, self.track), daemon=True).start()

    def track(self, sock: socket.socket) -> None:
        with self._lock:
            self._open.add(sock)
            if self._stop.is_set():  # the call ended while this connection was being made
                _cut(sock)

    def close(self) -> MeterReading:
        """The call ended: no more connections; what its requests cost. A request still being
        answered counts at its most, and its connections are cut (the API stops writing)."""
        self._stop.set()
        try:  # wake the accept at once
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as wake:
                wake.connect(self.socket_path)
        except OSError:
            pass
        self._thread.join(timeout=5)
        self._listener.close()
        try:
            os.unlink(self.socket_path)
        except OSError:
            pass
        # An answer is settled before the CLI has its last byte (ApiRelay._forward); an answer
        # whose end only the connection's close tells is settled as the relay reads that close,
        # a moment before the CLI does: wait that moment, else it would be charged at its most.
        self.meter.wait_settled(SETTLE_GRACE_S)
        reading = self.meter.close()
        with self._lock:
            for sock in self._open:
                _cut(sock)
            self._open.clear()
        log.info("relay_call_metered", call=self.meter.label, cost_usd=reading.cost_usd, requests=reading.requests,
                 refused=reading.refused, cap_usd=self.meter.cap_usd)
        return reading


class ApiRelay:
    """``with ApiRelay(env) as relay:`` … ``relay.open_call(label, cap)`` … (one per backend)."""

    def __init__(self, env: Mapping[str, str], *, prices: Mapping[str, ModelPrice] | None = None,
                 timeout_s: float = 600.0) -> None:
        self.upstream = Upstream.parse(env.get("ANTHROPIC_BASE_URL") or DEFAULT_UPSTREAM)
        self._auth = credential_headers(env)
        self._prices = dict(prices or {})
        self._timeout = timeout_s
        self.requests = 0
        self._numbers = itertools.count()
        self._dir = tempfile.mkdtemp(prefix="engine-relay-")  # short: unix socket paths max ~107 bytes
        os.chmod(self._dir, 0o755)
        weakref.finalize(self, shutil.rmtree, self._dir, ignore_errors=True)  # at the latest at exit

    def __enter__(self) -> ApiRelay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open_call(self, label: str, cap_usd: float | None) -> RelayedCall:
        """A new socket for one agent call (or one try of it), metered against ``cap_usd``."""
        meter = CallMeter(label, cap_usd, self._prices)
        return RelayedCall(self, meter, os.path.join(self._dir, f"c{next(self._numbers)}.sock"))

    def close(self) -> None:
        try:
            for name in os.listdir(self._dir):
                os.unlink(os.path.join(self._dir, name))
            os.rmdir(self._dir)
        except OSError:
            pass

    # --- one client connection ---------------------------------------------------------------

    def serve(self, client: socket.socket, meter: CallMeter, track: Callable[[socket.socket], None]) -> None:
        client.settimeout(self._timeout)
        try:
            parsed = _read_head(client, b"")
            if parsed is None:
                return
            head, body = parsed
            lines = head.decode("latin-1").split("\r\n")
            method, _, target = lines[0].partition(" ")
            target = target.rsplit(" ", 1)[0]
            headers = [(k.strip(), v.strip()) for k, _, v in (ln.partition(":") for ln in lines[1:]) if k]
            names = {k.lower(): v for k, v in headers}
            if "transfer-encoding" in names:
                client.sendall(Refusal(411, "invalid_request_error", "the relay needs a content-length").http())
                return
            length = int(names.get("content-length") or 0)
            if length > _MAX_BODY:
                client.sendall(Refusal(413, "request_too_large", "request too large for the relay").http())
                return
            while len(body) < length:
                chunk = client.recv(65536)
                if not chunk:
                    return
                body += chunk
            admitted = meter.admit(method, target, body[:length])
            if isinstance(admitted, Refusal):
                client.sendall(admitted.http())
                return
            ticket, body = admitted
            self.requests += 1
            answer = ResponseUsage()
            settled = False

            def settle() -> None:
                nonlocal settled
                if ticket is not None and not settled:
                    settled = True
                    meter.settle(ticket, answer)

            try:
                self._forward(client, method, target, headers, body, answer, track, settle)
            finally:
                settle()
        except OSError as exc:
            log.warning("relay_connection_failed", call=meter.label, error=str(exc))
        finally:
            client.close()

    def _forward(self, client: socket.socket, method: str, target: str, headers: list[tuple[str, str]],
                 body: bytes, answer: ResponseUsage, track: Callable[[socket.socket], None],
                 settle: Callable[[], None]) -> None:
        """Pass the request on and its answer back. An answer is settled once it is whole and
        before its last bytes go to the client: by the time the CLI has read it (and may exit,
        ending the call), its cost is known, whether or not the API has closed the connection."""
        kept = [(k, v) for k, v in headers if k.lower() not in _DROP]
        out = [f"{method} {self.upstream.prefix}{target} HTTP/1.1", f"host: {self.upstream.host}",
               "connection: close", "accept-encoding: identity", f"content-length: {len(body)}",
               *(f"{k}: {v}" for k, v in kept), *(f"{k}: {v}" for k, v in self._auth.items())]
        try:
            upstream = self.upstream.connect(self._timeout)
        except OSError as exc:
            answer.status, answer.complete = 502, True  # nothing reached the API: nothing to pay
            client.sendall(Refusal(502, "api_error", f"relay cannot reach {self.upstream.host}:"
                                   f"{self.upstream.port}: {exc}").http())
            return
        track(upstream)
        with upstream:
            upstream.sendall(("\r\n".join(out) + "\r\n\r\n").encode("latin-1") + body)
            while True:
                chunk = upstream.recv(65536)
                if not chunk:
                    answer.finish()
                    break
                answer.feed(chunk)
                if answer.whole:
                    answer.finish()
                    settle()
                client.sendall(chunk)
