"""The relay is the meter: what each model request an agent call's sandbox sends may cost, and
what it did cost (issue 26).

Whoever inside a call's sandbox sends a request (the CLI, or a command its shell runs), the
relay hands it to that call's :class:`CallMeter` first:

* only ``POST /v1/messages`` and ``POST /v1/messages/count_tokens`` are relayed (the bundled CLI,
  run through the relay, sends nothing else; the second is free); any other path is refused;
* a request after the call settled is refused;
* with a cap (the call's share of the run's budget, from the run's ledger) a request may write
  at most what is left of it: its ``max_tokens`` is lowered so that every token it may write is
  paid for (at least ``MIN_OUTPUT_TOKENS``), and held against the cap while it is answered; once
  nothing is left, requests are refused with the API's own billing error (HTTP 402), on which
  the CLI stops without retrying. So a call spends at most its cap plus the input of its last
  request (bounded by the model's context window) — as the CLI's own ``max_budget_usd``, which
  checks after each turn, but whoever sent the requests, and however much they asked to write;
* its answer is read as it streams (:class:`ResponseUsage`) and priced (``prices.py``): the call's
  metered cost is what its answers' usage says. An answer the API ended with an error event
  costs its input and what it had streamed; one cut off otherwise (a dropped connection, the
  call ended) costs the most it could have (its whole ``max_tokens``). A request for a model
  without a price cannot be priced or held against the cap: it is counted apart, the CLI's own
  ``max_budget_usd`` (the call's cap) stops the CLI, and the call is priced by the CLI's figure,
  else charged its cap (``reading.call_cost``).
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import structlog

from engine.agents.claude.prices import cache_write_factor, price_of, usage_cost, worst_case_cost
from engine.agents.claude.reading import MeterReading, api_tokens
from engine.agents.ledger import MIN_CALL_USD
from events.domain import ModelPrice

log = structlog.get_logger("engine.agents.relay")

MESSAGES = "/v1/messages"
COUNT_TOKENS = "/v1/messages/count_tokens"
RELAYED_PATHS = (MESSAGES, COUNT_TOKENS)
#: Below this many output tokens a turn cannot say anything useful: the request is refused instead.
MIN_OUTPUT_TOKENS = 64
MIN_THINKING_TOKENS = 1024  # the API's least thinking budget
BYTES_PER_TOKEN = 4  # the request's size in tokens, estimated before the API counts them
_MAX_JSON_BODY = 32 * 1024 * 1024
KEPT_REFUSALS = 20


@dataclass(frozen=True)
class Refusal:
    """An answer the relay gives instead of the API's: an HTTP status and the API's error body."""

    status: int
    kind: str
    message: str

    def http(self) -> bytes:
        body = json.dumps({"type": "error", "error": {"type": self.kind, "message": self.message}}).encode()
        return (f"HTTP/1.1 {self.status} {_REASONS.get(self.status, 'Error')}\r\ncontent-type: application/json\r\n"
                f"content-length: {len(body)}\r\nconnection: close\r\n\r\n").encode() + body


_REASONS = {400: "Bad Request", 402: "Payment Required", 403: "Forbidden", 411: "Length Required",
            413: "Payload Too Large", 502: "Bad Gateway"}


class ResponseUsage:
    """Reads an HTTP/1.1 response as it passes (head, chunked or not, JSON or server-sent events)
    and keeps the usage and model it reports."""

    def __init__(self) -> None:
        self.status = 0
        self.model: str | None = None
        self.usage: dict[str, Any] = {}
        self.complete = False
        self._head = bytearray()
        self._in_body = False
        self._chunked = False
        self._sse = False
        self._chunk_left = -1      # -1: reading a chunk-size line; -2: the CRLF after a chunk; -3: done
        self._size_line = bytearray()
        self._line = bytearray()
        self._json = bytearray()
        self._final_usage = False
        self.api_error = False   # the API ended the stream with an error event
        self.streamed_chars = 0  # text, thinking and tool input sent so far
        self._length: int | None = None  # the body's content-length, when the API gave one
        self._body_bytes = 0
        self._stopped = False    # an event stream's message_stop was read

    def feed(self, data: bytes) -> None:
        if not self._in_body:
            self._head += data
            if b"\r\n\r\n" not in self._head:
                return
            head, _, rest = bytes(self._head).partition(b"\r\n\r\n")
            self._start(head.decode("latin-1"))
            data = rest
        if self._chunked:
            self._dechunk(data)
        else:
            self._body(data)

    def finish(self) -> None:
        """The response ended: read whole (``whole``), or the upstream closed the connection."""
        if self._sse or not self._in_body:
            return
        if self.status >= 400:
            self.complete = True  # an error is not billed
            return
        try:
            message = json.loads(bytes(self._json))
        except ValueError:
            return
        if isinstance(message, dict) and isinstance(message.get("usage"), dict):
            self.model = str(message.get("model") or "") or None
            self.usage = dict(message["usage"])
            self.complete = True
        elif isinstance(message, dict) and "input_tokens" in message:  # count_tokens: free
            self.complete = True

    def _start(self, head: str) -> None:
        lines = head.split("\r\n")
        parts = lines[0].split(" ", 2)
        self.status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
        headers = {k.strip().lower(): v.strip().lower() for k, _, v in (ln.partition(":") for ln in lines[1:])}
        self._chunked = "chunked" in headers.get("transfer-encoding", "")
        self._sse = "text/event-stream" in headers.get("content-type", "")
        length = headers.get("content-length", "")
        self._length = int(length) if length.isdigit() and not self._chunked else None
        self._in_body = True

    @property
    def whole(self) -> bool:
        """The whole response has been read, though the API may not have closed the connection
        yet: the last chunk, content-length's last byte, or an event stream's message_stop."""
        if not self._in_body:
            return False
        if self._sse and self._stopped:
            return True
        if self._chunked:
            return self._chunk_left == -3
        return self._length is not None and self._body_bytes >= self._length

    def _dechunk(self, data: bytes) -> None:
        view = memoryview(data)
        while view and self._chunk_left != -3:
            if self._chunk_left == -1:
                end = bytes(view).find(b"\n")
                if end < 0:
                    self._size_line += view
                    return
                self._size_line += view[:end + 1]
                view = view[end + 1:]
                size = bytes(self._size_line).split(b";")[0].strip()
                self._size_line.clear()
                self._chunk_left = int(size, 16) if size else -1
                if self._chunk_left == 0:
                    self._chunk_left = -3
            elif self._chunk_left == -2:
                end = bytes(view).find(b"\n")
                if end < 0:
                    return
                view = view[end + 1:]
                self._chunk_left = -1
            else:
                take = view[:self._chunk_left]
                self._body(bytes(take))
                self._chunk_left -= len(take)
                view = view[len(take):]
                if self._chunk_left == 0:
                    self._chunk_left = -2

    def _body(self, data: bytes) -> None:
        self._body_bytes += len(data)
        if not self._sse:
            if len(self._json) + len(data) <= _MAX_JSON_BODY:
                self._json += data
            return
        self._line += data
        while b"\n" in self._line:
            line, _, rest = bytes(self._line).partition(b"\n")
            self._line = bytearray(rest)
            if line.startswith(b"data:"):
                self._event(line[5:].strip())

    def _event(self, data: bytes) -> None:
        try:
            event = json.loads(data)
        except ValueError:
            return
        if not isinstance(event, dict):
            return
        kind = event.get("type")
        if kind == "message_start" and isinstance(event.get("message"), dict):
            self.model = str(event["message"].get("model") or "") or None
            self.usage.update(event["message"].get("usage") or {})
        elif kind == "message_delta" and isinstance(event.get("usage"), dict):
            self.usage.update({k: v for k, v in event["usage"].items() if v is not None})  # cumulative counts
            self._final_usage = True
        elif kind == "message_stop":
            self.complete = self._final_usage
            self._stopped = True
        elif kind == "content_block_delta" and isinstance(event.get("delta"), dict):
            self.streamed_chars += sum(len(v) for k, v in event["delta"].items()
                                       if k in ("text", "thinking", "partial_json") and isinstance(v, str))
        elif kind == "error":
            self.api_error = True


@dataclass
class Ticket:
    """One request let through: what it may cost, held against the cap until its answer is read."""

    number: int
    price: ModelPrice | None
    input_estimate: int
    max_tokens: int
    hold: float
    input_factor: float = 1.0

    def most(self) -> float:
        """The most it can cost: its input (estimated) written to the cache, its whole max_tokens."""
        if self.price is None:
            return 0.0
        return worst_case_cost(self.price, self.input_estimate, self.max_tokens, self.input_factor)


@dataclass
class CallMeter:
    """One agent call's requests through the relay: admitted against its cap, then metered."""

    label: str
    cap_usd: float | None
    prices: Mapping[str, ModelPrice] = field(default_factory=dict)
    spent_usd: float = 0.0
    settled: bool = False

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._settled = threading.Condition(self._lock)  # notified as each request settles
        self._in_flight: dict[int, Ticket] = {}
        self._requests = 0
        self._refusals: list[str] = []
        self._refused = 0
        self._budget_refused = False
        self._unpriced = 0       # requests for a model without a price, answered
        self._unpriced_tokens = 0  # the tokens their answers reported
        self._models: dict[str, bool] = {}  # every model asked for (insertion order) -> has a price
        self._at_most_usd = 0.0  # answers cut off: charged at their most

    # --- before a request goes up ------------------------------------------------------------

    def admit(self, method: str, target: str, body: bytes) -> tuple[Ticket | None, bytes] | Refusal:
        """``(ticket, body to send)`` — the ticket None for a free request — or the refusal."""
        path = target.split("?", 1)[0]
        if method != "POST" or path not in RELAYED_PATHS:
            return self._refuse(403, "permission_error", f"the engine's relay forwards only the Messages API "
                                f"(POST {MESSAGES}), not {method} {path}")
        with self._lock:
            if self.settled:
                return self._refuse(403, "permission_error", "no agent call is in flight for this request: the "
                                    "call it belonged to has ended", locked=True)
            if path == COUNT_TOKENS:
                return None, body
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        max_tokens = request.get("max_tokens") if isinstance(request, dict) else None
        if not isinstance(request, dict) or not isinstance(max_tokens, int) or max_tokens < 1:
            return self._refuse(400, "invalid_request_error", "the engine's relay forwards only JSON Messages API "
                                "requests with a max_tokens")
        model = str(request.get("model") or "")
        price = price_of(model, self.prices)
        estimate = len(body) // BYTES_PER_TOKEN
        with self._lock:
            if self.settled:
                return self._refuse(403, "permission_error", "no agent call is in flight for this request", locked=True)
            ticket = Ticket(self._requests, price, estimate, max_tokens, hold=0.0, input_factor=cache_write_factor(body))
            if self.cap_usd is not None:
                left = self.cap_usd - self.spent_usd - self._held()
                if left < MIN_CALL_USD:
                    return self._out_of_money(left, locked=True)
                if price is not None and price.output_per_mtok > 0:
                    fits = max(MIN_OUTPUT_TOKENS, math.floor(left * 1e6 / price.output_per_mtok))
                    if fits < max_tokens:
                        ticket.max_tokens, body = fits, _lower_max_tokens(request, fits)
                    ticket.hold = worst_case_cost(price, 0, ticket.max_tokens)
            self._in_flight[ticket.number] = ticket
            self._requests += 1
            self._models.setdefault(model, price is not None)
            return ticket, body

    def _held(self) -> float:
        return sum(t.hold for t in self._in_flight.values())

    def _out_of_money(self, left: float, *, locked: bool) -> Refusal:
        self._budget_refused = True
        assert self.cap_usd is not None
        return self._refuse(402, "billing_error", (
            f"budget exhausted: this agent call's share of the run's budget (${self.cap_usd:.4f}) is spent "
            f"(${self.cap_usd - left:.4f} metered or held by the engine's relay); the engine refuses further model "
            "requests of this call"), locked=locked)

    def _refuse(self, status: int, kind: str, message: str, *, locked: bool = False) -> Refusal:
        if not locked:
            with self._lock:
                return self._refuse(status, kind, message, locked=True)
        self._refused += 1
        if len(self._refusals) < KEPT_REFUSALS:  # a sender in a loop must not fill the log
            self._refusals.append(f"{status}: {message}")
        if self._refused <= KEPT_REFUSALS or self._refused % 100 == 0:
            log.warning("relay_refused", call=self.label, status=status, reason=message, refused=self._refused)
        return Refusal(status, kind, message)

    # --- after its answer ------------------------------------------------------------------

    def settle(self, ticket: Ticket, answer: ResponseUsage) -> float | None:
        """Debit what the answer cost (None: unknown) and release the request's hold."""
        tokens = api_tokens(answer.usage) if ticket.price is None else 0  # what an unpriced answer reported
        if answer.status >= 400:
            cost: float | None = 0.0  # the API bills no error
        elif ticket.price is None:
            cost = None
        elif answer.complete:
            cost = usage_cost(ticket.price, answer.usage)
        elif "input_tokens" in answer.usage and answer.api_error:  # the API stopped it: what it had sent
            written = max(_int(answer.usage.get("output_tokens")), answer.streamed_chars // BYTES_PER_TOKEN + 1)
            cost = usage_cost(ticket.price, {**answer.usage, "output_tokens": written})
        elif "input_tokens" in answer.usage:  # input known, the answer cut off: all it may have written
            cost = usage_cost(ticket.price, {**answer.usage, "output_tokens": ticket.max_tokens})
        else:
            cost = ticket.most()
        cut_off = answer.status < 400 and not answer.complete and cost is not None
        with self._lock:
            self._in_flight.pop(ticket.number, None)
            self._settled.notify_all()
            if cost is None:
                self._unpriced += 1
                self._unpriced_tokens += tokens
            else:
                self.spent_usd += cost
                self._at_most_usd += cost if cut_off else 0.0
        log.debug("relay_metered", call=self.label, model=answer.model, usage=answer.usage, cost_usd=cost,
                  complete=answer.complete)
        return cost

    def wait_settled(self, timeout_s: float) -> bool:
        """Wait until no request is in flight (at most ``timeout_s``); True if none is. The client
        has an answer's last byte a moment before the relay reads the API's end of it."""
        with self._settled:
            return self._settled.wait_for(lambda: not self._in_flight, timeout_s)

    def close(self) -> MeterReading:
        """The call ended: later requests are refused; requests still in flight count at their
        most (their holds)."""
        with self._lock:
            self.settled = True
            open_unpriced = sum(t.price is None for t in self._in_flight.values())
            unpriced = self._unpriced + open_unpriced
            most = sum(t.most() for t in self._in_flight.values())  # cut off now: the most they could cost
            priced = round(self.spent_usd + most, 9)
            return MeterReading(None if unpriced else priced, self._requests, tuple(self._refusals),
                                self._budget_refused, round(self._at_most_usd + most, 9), self._refused,
                                priced_usd=priced, unpriced=unpriced, models=tuple(self._models),
                                unpriced_models=tuple(m for m, known in self._models.items() if not known),
                                unpriced_tokens=self._unpriced_tokens, unpriced_open=open_unpriced)


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def _lower_max_tokens(request: dict[str, Any], max_tokens: int) -> bytes:
    """The request with ``max_tokens`` lowered, and its thinking budget under it (the API needs
    it below ``max_tokens`` and at least 1024: a turn with less to spend goes without thinking)."""
    request = dict(request, max_tokens=max_tokens)
    thinking = request.get("thinking")
    if isinstance(thinking, dict) and isinstance(thinking.get("budget_tokens"), int) \
            and thinking["budget_tokens"] >= max_tokens:
        if max_tokens - 1 >= MIN_THINKING_TOKENS:
            request["thinking"] = dict(thinking, budget_tokens=max_tokens - 1)
        else:
            del request["thinking"]
    return json.dumps(request).encode()
