"""A stand-in for the Anthropic Messages API on loopback, for the real Claude Code CLI.

The real CLI (bundled in claude-agent-sdk) reaches it through ``ANTHROPIC_BASE_URL``. It speaks
the protocol as the CLI uses it: ``POST /v1/messages`` (``?beta=true``) answered with a
server-sent-event stream (``message_start``, ``content_block_start`` / ``content_block_delta``
/ ``content_block_stop`` per block, ``message_delta`` with the stop reason and output usage,
``message_stop``), or with one JSON body when the request does not stream; ``tool_use`` blocks
that the CLI executes and answers with ``tool_result`` in the next request; error statuses with
the API's error envelope (401, 429, 500, 529, ...); and a connection dropped mid-stream.

What the "model" says comes from a per-test responder: ``responder(exchange) -> Reply``, where
``exchange`` is the parsed request (system prompt, messages, tools) and ``Reply`` one of
:class:`Text`, :class:`Tools`, :class:`Fail`, :class:`Drop`, :class:`Hang`. Every request is
recorded (path, the names of its headers, its body) so tests can assert on what the CLI sent.
Usage is counted from the request and reply sizes (about four characters a token), so the CLI
prices calls as it would for real tokens of a known model. Every answer given is logged with
its model and usage (``served``): what the stand-in would bill.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
               404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
               500: "api_error", 529: "overloaded_error"}


# --- what the model answers -------------------------------------------------------------------


@dataclass(frozen=True)
class Text:
    """An end-of-turn answer. ``output_tokens``: report that many written tokens (as a model that
    wrote at length would), at most the request's ``max_tokens`` as the real API does."""

    text: str
    output_tokens: int | None = None


@dataclass(frozen=True)
class ToolCall:
    name: str
    input: dict[str, Any]
    id: str = field(default_factory=lambda: "toolu_" + uuid.uuid4().hex[:24])


@dataclass(frozen=True)
class Tools:
    """A turn that asks the CLI to run tools (optionally after some text)."""

    calls: Sequence[ToolCall]
    text: str = ""


@dataclass(frozen=True)
class Fail:
    """An HTTP error with the API's error envelope."""

    status: int
    message: str = "stand-in error"
    retry_after: float | None = None


@dataclass(frozen=True)
class Drop:
    """Start the stream, then drop the connection without finishing it."""


@dataclass(frozen=True)
class Hang:
    """Accept the request and say nothing for ``seconds`` (then drop)."""

    seconds: float = 30.0


Reply = Text | Tools | Fail | Drop | Hang


@dataclass
class Exchange:
    """One request as the model sees it."""

    path: str
    body: dict[str, Any]
    header_names: list[str]
    api_key: str | None

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))

    @property
    def system(self) -> str:
        system = self.body.get("system")
        if isinstance(system, list):
            return "\n".join(b.get("text", "") for b in system if isinstance(b, dict))
        return str(system or "")

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    @property
    def tool_names(self) -> list[str]:
        return [str(t.get("name")) for t in self.body.get("tools") or []]

    def user_texts(self) -> list[str]:
        """Every text block the user side sent (prompt, reminders), in order."""
        texts: list[str] = []
        for message in self.messages:
            if message.get("role") != "user":
                continue
            content = message.get("content")
            if isinstance(content, str):
                texts.append(content)
                continue
            for block in content or []:
                if isinstance(block, dict) and block.get("type") == "text":
                    texts.append(str(block.get("text", "")))
        return texts

    def tool_results(self) -> list[dict[str, Any]]:
        """The ``tool_result`` blocks of the LAST user message (answers to the previous turn)."""
        for message in reversed(self.messages):
            if message.get("role") == "user" and isinstance(message.get("content"), list):
                return [b for b in message["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
            if message.get("role") == "user":
                return []
        return []

    def turn(self) -> int:
        """How many assistant turns precede this request (0 = the first call of a conversation)."""
        return sum(1 for m in self.messages if m.get("role") == "assistant")


def tool_result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, list):
        return "\n".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return str(content or "")


Responder = Callable[[Exchange], Reply]


def tokens(text: str) -> int:
    return max(1, len(text) // 4)


# --- the server -------------------------------------------------------------------------------


class MessagesAPIStandIn:
    """``with MessagesAPIStandIn(responder) as api:`` … ``api.url`` … ``api.exchanges``."""

    def __init__(self, responder: Responder, *, expected_key: str | None = None) -> None:
        self.responder = responder
        self.expected_key = expected_key
        self.exchanges: list[Exchange] = []
        self.other_requests: list[str] = []
        self.served: list[dict[str, Any]] = []  # {"model", "usage"} of every message answered
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True, name="messages-api-stand-in")

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> MessagesAPIStandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def message_calls(self) -> list[Exchange]:
        with self._lock:
            return [e for e in self.exchanges if e.path.startswith("/v1/messages") and "count_tokens" not in e.path]

    def _record(self, exchange: Exchange) -> None:
        with self._lock:
            self.exchanges.append(exchange)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def _body(self) -> dict[str, Any]:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    return json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    return {}

            def _send_json(self, status: int, payload: dict[str, Any], extra: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.send_header("request-id", "req_" + uuid.uuid4().hex[:20])
                for k, v in (extra or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def _error(self, status: int, message: str, retry_after: float | None = None) -> None:
                extra = {"retry-after": f"{retry_after:g}"} if retry_after is not None else None
                self._send_json(status, {"type": "error", "error": {"type": ERROR_TYPES.get(status, "api_error"),
                                                                    "message": message}}, extra)

            def do_GET(self) -> None:
                api.other_requests.append(f"GET {self.path}")
                self._error(404, f"the stand-in does not serve {self.path}")

            def do_HEAD(self) -> None:
                api.other_requests.append(f"HEAD {self.path}")
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                body = self._body()
                key = self.headers.get("x-api-key") or (self.headers.get("authorization") or "").removeprefix("Bearer ")
                exchange = Exchange(path=self.path, body=body, header_names=sorted(h.lower() for h in self.headers),
                                    api_key=key or None)
                if not self.path.startswith("/v1/messages"):
                    api.other_requests.append(f"POST {self.path}")
                    self._error(404, f"the stand-in does not serve {self.path}")
                    return
                api._record(exchange)
                if api.expected_key is not None and key != api.expected_key:
                    self._error(401, "invalid x-api-key")
                    return
                if "count_tokens" in self.path:
                    self._send_json(200, {"input_tokens": tokens(json.dumps(body))})
                    return
                try:
                    reply = api.responder(exchange)
                except Exception as exc:  # a test's responder bug shows up as a 500 with its message
                    self._error(500, f"stand-in responder failed: {exc!r}")
                    return
                self._answer(exchange, reply)

            def _answer(self, exchange: Exchange, reply: Reply) -> None:
                if isinstance(reply, Fail):
                    self._error(reply.status, reply.message, reply.retry_after)
                    return
                if isinstance(reply, Hang):
                    time.sleep(reply.seconds)
                    self.close_connection = True
                    return
                message_id = "msg_" + uuid.uuid4().hex[:24]
                input_tokens = tokens(json.dumps(exchange.body))
                blocks: list[dict[str, Any]] = []
                if isinstance(reply, Text):
                    blocks.append({"type": "text", "text": reply.text})
                    stop = "end_turn"
                elif isinstance(reply, Tools):
                    if reply.text:
                        blocks.append({"type": "text", "text": reply.text})
                    blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.input} for c in reply.calls]
                    stop = "tool_use"
                else:  # Drop
                    blocks.append({"type": "text", "text": "partial answer that never"})
                    stop = "end_turn"
                output_tokens = tokens(json.dumps(blocks))
                if isinstance(reply, Text) and reply.output_tokens is not None:
                    output_tokens = min(reply.output_tokens, int(exchange.body.get("max_tokens") or reply.output_tokens))
                usage_in = {"input_tokens": input_tokens, "output_tokens": 1, "cache_creation_input_tokens": 0,
                            "cache_read_input_tokens": 0}
                with api._lock:
                    api.served.append({"model": exchange.model, "usage": {**usage_in, "output_tokens": output_tokens}})
                if not exchange.body.get("stream"):
                    self._send_json(200, {"id": message_id, "type": "message", "role": "assistant",
                                          "model": exchange.model, "content": blocks, "stop_reason": stop,
                                          "stop_sequence": None,
                                          "usage": {**usage_in, "output_tokens": output_tokens}})
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("request-id", "req_" + uuid.uuid4().hex[:20])
                self.send_header("connection", "close")
                self.end_headers()
                self.close_connection = True
                self._event("message_start", {"type": "message_start", "message": {
                    "id": message_id, "type": "message", "role": "assistant", "model": exchange.model,
                    "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage_in}})
                for index, block in enumerate(blocks):
                    if block["type"] == "text":
                        self._event("content_block_start", {"type": "content_block_start", "index": index,
                                                            "content_block": {"type": "text", "text": ""}})
                        if isinstance(reply, Drop):
                            self._event("content_block_delta", {"type": "content_block_delta", "index": index,
                                                                "delta": {"type": "text_delta", "text": block["text"]}})
                            self.wfile.flush()
                            return  # connection closes: the stream never ends
                        for piece in _chunks(block["text"], 200):
                            self._event("content_block_delta", {"type": "content_block_delta", "index": index,
                                                                "delta": {"type": "text_delta", "text": piece}})
                    else:
                        self._event("content_block_start", {"type": "content_block_start", "index": index,
                                                            "content_block": {"type": "tool_use", "id": block["id"],
                                                                              "name": block["name"], "input": {}}})
                        for piece in _chunks(json.dumps(block["input"]), 200):
                            self._event("content_block_delta", {"type": "content_block_delta", "index": index,
                                                                "delta": {"type": "input_json_delta",
                                                                          "partial_json": piece}})
                    self._event("content_block_stop", {"type": "content_block_stop", "index": index})
                self._event("message_delta", {"type": "message_delta",
                                              "delta": {"stop_reason": stop, "stop_sequence": None},
                                              "usage": {"output_tokens": output_tokens}})
                self._event("message_stop", {"type": "message_stop"})
                self.wfile.flush()

            def _event(self, name: str, data: dict[str, Any]) -> None:
                self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())

        return Handler


def _chunks(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]
