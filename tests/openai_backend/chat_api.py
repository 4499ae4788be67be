"""An OpenAI-compatible Chat Completions server on loopback, for the ``openai`` backend's tests.

It speaks the protocol as the official client uses it: ``POST /v1/chat/completions`` answered
with one ``chat.completion`` JSON body, or — when the request has ``"stream": true`` — a
server-sent-event stream of ``chat.completion.chunk`` objects (a role delta, content deltas,
``tool_calls`` deltas whose ``function.arguments`` arrive in pieces, a finish reason, a usage
chunk with empty ``choices`` when ``stream_options.include_usage`` is set, then ``data: [DONE]``);
``GET /v1/models``; errors in the API's envelope (``{"error": {"message", "type", "code"}}``).

Like real servers, it may lack features: ``tools=False`` answers a request with ``tools`` with
a 400 (as vLLM without ``--enable-auto-tool-choice`` does), ``json_schema=False`` does the same
for ``response_format`` (as some gateways do). ``Garbage`` answers 200 with a body that is not
JSON (a proxy that cut the response). The "model" is a per-test responder:
``responder(exchange) -> Reply``; every request is recorded.
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

ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 404: "invalid_request_error",
               429: "rate_limit_exceeded", 500: "server_error", 503: "server_error"}


@dataclass(frozen=True)
class Text:
    content: str


@dataclass(frozen=True)
class Call:
    name: str
    arguments: dict[str, Any]
    id: str = field(default_factory=lambda: "call_" + uuid.uuid4().hex[:20])


@dataclass(frozen=True)
class Tools:
    calls: Sequence[Call]
    content: str = ""


@dataclass(frozen=True)
class Fail:
    status: int
    message: str = "stand-in error"


@dataclass(frozen=True)
class Garbage:
    """HTTP 200 with a JSON content type and a body cut in the middle."""


@dataclass(frozen=True)
class Hang:
    seconds: float = 30.0


Reply = Text | Tools | Fail | Garbage | Hang


@dataclass
class Exchange:
    path: str
    body: dict[str, Any]
    headers: dict[str, str]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    @property
    def tool_names(self) -> list[str]:
        return [str((t.get("function") or {}).get("name")) for t in self.body.get("tools") or []]

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))

    def user_texts(self) -> list[str]:
        return [str(m.get("content") or "") for m in self.messages if m.get("role") == "user"]

    def system(self) -> str:
        return "\n".join(str(m.get("content") or "") for m in self.messages if m.get("role") == "system")

    def tool_results(self) -> list[str]:
        """The ``tool`` messages that follow the last assistant turn."""
        out: list[str] = []
        for message in reversed(self.messages):
            if message.get("role") != "tool":
                break
            out.insert(0, str(message.get("content") or ""))
        return out

    def turn(self) -> int:
        return sum(1 for m in self.messages if m.get("role") == "assistant")


Responder = Callable[[Exchange], Reply]


def tokens(text: str) -> int:
    return max(1, len(text) // 4)


class ChatAPIStandIn:
    """``with ChatAPIStandIn(responder) as api:`` … ``api.url`` (ends in /v1) … ``api.exchanges``."""

    def __init__(self, responder: Responder, *, expected_key: str | None = None, tools: bool = True,
                 json_schema: bool = True, models: Sequence[str] = ()) -> None:
        self.responder = responder
        self.expected_key = expected_key
        self.tools, self.json_schema = tools, json_schema
        self.models = list(models)
        self.exchanges: list[Exchange] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True, name="chat-api-stand-in")

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> ChatAPIStandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def chat_calls(self) -> list[Exchange]:
        with self._lock:
            return list(self.exchanges)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send_json(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.send_header("x-request-id", "req_" + uuid.uuid4().hex[:20])
                self.end_headers()
                self.wfile.write(data)

            def _error(self, status: int, message: str, code: str | None = None) -> None:
                self._send_json(status, {"error": {"message": message, "type": ERROR_TYPES.get(status, "api_error"),
                                                   "param": None, "code": code}})

            def _authorised(self) -> bool:
                key = (self.headers.get("authorization") or "").removeprefix("Bearer ").strip()
                if api.expected_key is not None and key != api.expected_key:
                    self._error(401, "Incorrect API key provided.", "invalid_api_key")
                    return False
                return True

            def do_GET(self) -> None:
                if not self._authorised():
                    return
                if self.path.rstrip("/") == "/v1/models":
                    self._send_json(200, {"object": "list", "data": [
                        {"id": m, "object": "model", "created": 0, "owned_by": "stand-in"} for m in api.models]})
                    return
                self._error(404, f"the stand-in does not serve {self.path}")

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    self._error(400, "the body is not JSON")
                    return
                if self.path != "/v1/chat/completions":
                    self._error(404, f"the stand-in does not serve {self.path}")
                    return
                exchange = Exchange(self.path, body, {k.lower(): v for k, v in self.headers.items()})
                with api._lock:
                    api.exchanges.append(exchange)
                if not self._authorised():
                    return
                if api.models and body.get("model") not in api.models:
                    self._error(404, f"The model `{body.get('model')}` does not exist.", "model_not_found")
                    return
                if body.get("tools") and not api.tools:
                    self._error(400, '"auto" tool choice requires --enable-auto-tool-choice and '
                                     '--tool-call-parser to be set')
                    return
                if (body.get("response_format") or {}).get("type") == "json_schema" and not api.json_schema:
                    self._error(400, "response_format of type json_schema is not supported by this model")
                    return
                try:
                    reply = api.responder(exchange)
                except Exception as exc:  # a responder bug shows as a 500 with its message
                    self._error(500, f"stand-in responder failed: {exc!r}")
                    return
                self._answer(exchange, reply)

            def _answer(self, exchange: Exchange, reply: Reply) -> None:
                if isinstance(reply, Fail):
                    self._error(reply.status, reply.message)
                    return
                if isinstance(reply, Hang):
                    time.sleep(reply.seconds)
                    self.close_connection = True
                    return
                if isinstance(reply, Garbage):
                    data = b'{"id": "chatcmpl-cut", "object": "chat.completion", "choices": [{"index": 0, "mess'
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                content = reply.content
                calls = [{"id": c.id, "type": "function", "function": {"name": c.name,
                                                                      "arguments": json.dumps(c.arguments)}}
                         for c in reply.calls] if isinstance(reply, Tools) else []
                finish = "tool_calls" if calls else "stop"
                usage = {"prompt_tokens": tokens(json.dumps(exchange.messages)),
                         "completion_tokens": tokens(content + json.dumps(calls))}
                usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
                base = {"id": "chatcmpl-" + uuid.uuid4().hex[:24], "created": int(time.time()),
                        "model": exchange.body.get("model"), "system_fingerprint": "stand-in"}
                if not exchange.stream:
                    message: dict[str, Any] = {"role": "assistant", "content": content or None, "refusal": None}
                    if calls:
                        message["tool_calls"] = calls
                    self._send_json(200, {**base, "object": "chat.completion", "usage": usage, "choices": [
                        {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}]})
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                self.close_connection = True

                def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> None:
                    self._event({**base, "object": "chat.completion.chunk", "choices": [
                        {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}]})

                chunk({"role": "assistant", "content": ""})
                for piece in _chunks(content, 120):
                    if piece:
                        chunk({"content": piece})
                for index, call in enumerate(calls):
                    chunk({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                           "function": {"name": call["function"]["name"], "arguments": ""}}]})
                    for piece in _chunks(call["function"]["arguments"], 40):
                        chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
                chunk({}, finish)
                if (exchange.body.get("stream_options") or {}).get("include_usage"):
                    self._event({**base, "object": "chat.completion.chunk", "choices": [], "usage": usage})
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

            def _event(self, data: dict[str, Any]) -> None:
                self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())

        return Handler


def _chunks(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]
