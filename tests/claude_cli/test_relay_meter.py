"""The API relay is the meter (issue 26): every request a call's sandbox sends is admitted against
the call's cap, its answer's usage is read as it streams and priced, and what is not the
Messages API, or comes after the call ended, is refused.

These talk to the relay's per-call unix socket as the sandbox's bridge does, with the Messages-API
stand-in (tests/support/messages_api.py) upstream on loopback. The real CLI through the relay,
with its shell sending requests of its own, is ``test_relay_meter_e2e.py``."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from typing import Any

import pytest

from engine.agents.claude import relay as relay_module
from engine.agents.claude.metering import CallMeter, ResponseUsage
from engine.agents.claude.prices import ANTHROPIC_LIST_PRICES, price_of, usage_cost
from engine.agents.claude.reading import call_cost, cli_tokens
from engine.agents.claude.relay import ApiRelay, RelayedCall
from events.domain import ModelPrice
from tests.claude_cli.conftest import FAKE_KEY, MODEL
from tests.support.messages_api import Drop, MessagesAPIStandIn, Text


class UnixHTTPConnection(http.client.HTTPConnection):
    """What the sandbox's bridge does: an HTTP connection carried over the call's relay socket."""

    def __init__(self, path: str) -> None:
        super().__init__("127.0.0.1", timeout=30)
        self._path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self._path)


def send(call: RelayedCall, body: dict[str, Any] | bytes, *, method: str = "POST",
         path: str = "/v1/messages?beta=true") -> tuple[int, dict[str, Any] | str]:
    conn = UnixHTTPConnection(call.socket_path)
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    conn.request(method, path, body=data if method == "POST" else None,
                 headers={"x-api-key": "sk-ant-placeholder", "content-type": "application/json"})
    response = conn.getresponse()
    raw = response.read().decode()
    conn.close()
    if response.getheader("content-type", "").startswith("application/json"):
        return response.status, json.loads(raw)
    return response.status, raw


def ask(text: str = "hello", *, max_tokens: int = 4096, stream: bool = True, model: str = MODEL) -> dict[str, Any]:
    return {"model": model, "max_tokens": max_tokens, "stream": stream,
            "messages": [{"role": "user", "content": text}]}


def served_usd(api: MessagesAPIStandIn, prices: dict[str, ModelPrice] | None = None) -> float:
    """The stand-in's own bill: every answer it gave, its usage at the model's price."""
    total = 0.0
    for answer in api.served:
        price = price_of(answer["model"], prices or {})
        assert price is not None, answer
        total += usage_cost(price, answer["usage"])
    return total


@pytest.fixture
def relay_to(stand_in):
    relays: list[ApiRelay] = []

    def start(responder, **kwargs: Any) -> tuple[ApiRelay, MessagesAPIStandIn]:
        api = stand_in(responder)
        relay = ApiRelay({"ANTHROPIC_API_KEY": FAKE_KEY, "ANTHROPIC_BASE_URL": api.url}, **kwargs)
        relays.append(relay)
        return relay, api

    yield start
    for relay in relays:
        relay.close()


def test_streamed_and_json_answers_are_metered_at_the_list_price(relay_to):
    relay, api = relay_to(lambda exchange: Text("an answer " * 40))
    call = relay.open_call("c", None)
    assert send(call, ask(stream=True))[0] == 200
    assert send(call, ask("again", stream=False))[0] == 200
    reading = call.close()
    assert reading.requests == 2 and not reading.refusals
    assert reading.cost_usd == pytest.approx(served_usd(api), abs=1e-9) and reading.cost_usd > 0
    # The key the relay sent upstream is the real one; the sandbox's placeholder never left.
    assert {e.api_key for e in api.exchanges} == {FAKE_KEY}
    assert price_of("claude-sonnet-4-5-20250929", {}) == ANTHROPIC_LIST_PRICES["claude-sonnet-4"]


@pytest.mark.parametrize(("method", "path"), [
    ("GET", "/v1/models"), ("POST", "/v1/messages/batches"), ("POST", "/v1/files"), ("POST", "/v1/complete"),
    ("POST", "/v1/messages/../files"), ("POST", "/api/oauth/token"), ("GET", "/v1/messages")])
def test_only_the_paths_the_cli_uses_are_relayed(relay_to, method, path):
    relay, api = relay_to(lambda exchange: Text("x"))
    call = relay.open_call("c", None)
    status, body = send(call, ask(), method=method, path=path)
    reading = call.close()
    assert status == 403 and isinstance(body, dict) and body["error"]["type"] == "permission_error", body
    assert api.exchanges == [] and api.other_requests == []  # nothing reached the API
    assert reading.refusals and reading.cost_usd == 0


def test_count_tokens_is_relayed_and_free(relay_to):
    relay, api = relay_to(lambda exchange: Text("x"))
    call = relay.open_call("c", 0.01)
    status, body = send(call, ask(), path="/v1/messages/count_tokens?beta=true")
    assert status == 200 and isinstance(body, dict) and body["input_tokens"] > 0
    assert call.close().cost_usd == 0


def test_a_call_cannot_be_made_to_write_past_its_cap_and_is_then_refused_as_the_api_would(relay_to):
    """A request asking for 2 M output tokens (about $30 at list price) is lowered to what the cap
    pays for; once the cap is spent, the next request gets the API's billing error (402)."""
    relay, api = relay_to(lambda exchange: Text("long", output_tokens=2_000_000))
    cap = 0.05
    call = relay.open_call("c", cap)
    assert send(call, ask(max_tokens=2_000_000))[0] == 200
    status, body = send(call, ask(max_tokens=2_000_000))
    reading = call.close()
    assert status == 402 and isinstance(body, dict) and body["error"]["type"] == "billing_error"
    assert body["error"]["message"].startswith("budget exhausted")
    assert len(api.served) == 1 and api.exchanges[0].body["max_tokens"] < 2_000_000
    served = served_usd(api)
    assert reading.cost_usd == pytest.approx(served, abs=1e-9)
    input_usd = api.served[0]["usage"]["input_tokens"] * 3.0 / 1e6
    assert cap - 1e-4 <= served <= cap + input_usd  # the cap, give or take its last request's input
    assert reading.budget_refused and len(reading.refusals) == 1


def test_a_request_after_the_call_ended_is_refused(relay_to):
    relay, api = relay_to(lambda exchange: Text("x"))
    call = relay.open_call("c", None)
    assert send(call, ask())[0] == 200
    reading = call.close()
    with pytest.raises(OSError):  # the call's socket is gone: nothing in its sandbox gets out
        send(call, ask())
    refused = call.meter.admit("POST", "/v1/messages", json.dumps(ask()).encode())  # one already let in
    assert not isinstance(refused, tuple) and refused.status == 403 and "no agent call" in refused.message
    assert reading.requests == 1 and len(api.served) == 1


def model_usage(tokens: int) -> dict[str, Any]:
    """The CLI's ``modelUsage`` of a result that used ``tokens`` of the unpriced model."""
    return {"my-gateway-model": {"inputTokens": tokens, "outputTokens": 0, "costUSD": 0.01}}


def test_a_model_without_a_price_is_let_through_counted_apart_and_priced_by_the_cli_else_the_cap(relay_to):
    """The relay cannot price such a request: it is not charged the call's cap as it passes (the
    CLI's own max_budget_usd stops the CLI at the cap), the reading says how many and which model,
    and the call costs what the CLI reported, else its cap, else it is unknown (reading.call_cost)."""
    relay, api = relay_to(lambda exchange: Text("x"))
    capped = relay.open_call("capped", 0.2)
    assert [send(capped, ask(model="my-gateway-model"))[0] for _ in range(3)] == [200, 200, 200]
    assert send(capped, ask())[0] == 200  # and one of a priced model beside them
    reading = capped.close()
    assert reading.cost_usd is None and reading.unpriced == 3 and reading.requests == 4
    assert reading.models == ("my-gateway-model", MODEL) and reading.unpriced_models == ("my-gateway-model",)
    priced = usage_cost(price_of(MODEL, {}), api.served[-1]["usage"])
    assert reading.priced_usd == pytest.approx(priced)
    assert call_cost(reading, 0.01, 0.2) == (pytest.approx(0.01), "cli_reported")
    assert call_cost(reading, priced / 2, 0.2) == (pytest.approx(priced), "cli_reported")  # at least what was priced
    assert call_cost(reading, None, 0.2) == (pytest.approx(0.2), "cap")
    assert call_cost(reading, None, None) == (None, "unknown")
    assert reading.usage(0.01)["unpriced_models"] == ["my-gateway-model"]
    # The CLI's figure covers the CLI's own requests only: taken when the tokens the relay saw for
    # the unpriced model are no more than the CLI reports for it (its modelUsage), else the cap.
    unpriced_served = [a["usage"] for a in api.served if a["model"] == "my-gateway-model"]
    assert reading.unpriced_tokens == sum(u["input_tokens"] + u["output_tokens"] for u in unpriced_served)
    whole = cli_tokens(model_usage(reading.unpriced_tokens), reading.unpriced_models)
    assert whole == reading.unpriced_tokens
    assert call_cost(reading, 0.01, 0.2, whole) == (pytest.approx(0.01), "cli_reported")
    short = cli_tokens(model_usage(reading.unpriced_tokens - 1), reading.unpriced_models)
    assert call_cost(reading, 0.01, 0.2, short) == (pytest.approx(0.2), "cap")
    assert call_cost(reading, 0.01, None, short) == (None, "unknown")
    assert cli_tokens({"another-model": {"inputTokens": 5}}, reading.unpriced_models) is None  # nothing to compare
    uncapped = relay.open_call("uncapped", None)
    assert send(uncapped, ask(model="my-gateway-model"))[0] == 200
    assert uncapped.close().cost_usd is None
    # Every request priced: the relay's figure, whatever the CLI says.
    known = relay.open_call("known", 0.2)
    assert send(known, ask())[0] == 200
    known_reading = known.close()
    assert call_cost(known_reading, 123.0, 0.2) == (known_reading.cost_usd, "price_table")
    # A price in the run's model_prices (the table the OpenAI-compatible backend uses) prices it.
    priced_relay, priced_api = relay_to(lambda exchange: Text("x"), prices={
        "my-gateway-model": ModelPrice(input_per_mtok=1.0, output_per_mtok=2.0)})
    priced = priced_relay.open_call("priced", 0.2)
    assert send(priced, ask(model="my-gateway-model"))[0] == 200
    assert priced.close().cost_usd == pytest.approx(
        served_usd(priced_api, {"my-gateway-model": ModelPrice(input_per_mtok=1.0, output_per_mtok=2.0)}))


def test_an_answer_cut_off_costs_the_most_it_could_have(relay_to):
    relay, api = relay_to(lambda exchange: Drop())
    call = relay.open_call("c", None)
    send(call, ask(max_tokens=1000))
    reading = call.close()
    input_tokens = api.served[0]["usage"]["input_tokens"]
    assert reading.cost_usd == pytest.approx((input_tokens * 3.0 + 1000 * 15.0) / 1e6)
    # The call's usage says how much of its cost is such a charge at the most (the API may have
    # billed less), so whoever adds up the money knows the range it lies in.
    assert reading.usage(None)["charged_at_most_usd"] == pytest.approx(reading.cost_usd)


def test_answers_read_to_their_end_are_charged_exactly_and_say_so(relay_to):
    relay, api = relay_to(lambda exchange: Text("done"))
    call = relay.open_call("c", 1.0)
    send(call, ask(max_tokens=1000))
    reading = call.close()
    assert reading.cost_usd == pytest.approx(served_usd(api)) and reading.cost_usd > 0
    assert "charged_at_most_usd" not in reading.usage(None)


def test_a_chunked_event_stream_is_read_in_pieces_of_any_size():
    events = [
        {"type": "message_start", "message": {"model": "claude-sonnet-4-5", "usage": {
            "input_tokens": 10, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 1000,
            "output_tokens": 1}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 20}},
        {"type": "message_stop"},
    ]
    sse = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
    body = b"".join(b"%x\r\n%s\r\n" % (len(sse[i:i + 37]), sse[i:i + 37]) for i in range(0, len(sse), 37)) + b"0\r\n\r\n"
    raw = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" + body
    stop = raw.index(b'"message_stop"')
    for size in (1, 7, 4096):
        reader = ResponseUsage()
        for i in range(0, len(raw), size):
            assert not reader.whole or i > stop   # whole (and settled) at the message_stop, not before
            reader.feed(raw[i:i + size])
        assert reader.whole
        reader.finish()
        assert reader.complete and reader.model == "claude-sonnet-4-5"
        assert usage_cost(ANTHROPIC_LIST_PRICES["claude-sonnet-4"], reader.usage) == pytest.approx(
            (10 * 3.0 + 100 * 3.75 + 1000 * 0.3 + 20 * 15.0) / 1e6)


def test_an_answer_the_api_ended_with_an_error_costs_what_it_had_sent():
    meter = CallMeter("c", None)
    admitted = meter.admit("POST", "/v1/messages", json.dumps(ask(max_tokens=32000)).encode())
    assert isinstance(admitted, tuple) and admitted[0] is not None
    events = [{"type": "message_start", "message": {"model": MODEL, "usage": {"input_tokens": 1000, "output_tokens": 1}}},
              {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x" * 400}},
              {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}]
    answer = ResponseUsage()
    answer.feed(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n"
                + "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode())
    answer.finish()
    assert meter.settle(admitted[0], answer) == pytest.approx((1000 * 3.0 + 101 * 15.0) / 1e6)


def test_an_answer_read_whole_before_the_api_closes_is_charged_exactly_when_the_call_ends_at_once(monkeypatch):
    """A call that ends the moment the CLI has read its answer (it exits) must be charged what the
    answer cost, not its most, though the API has not closed the connection yet: the relay settles
    an answer once it is whole, before passing its last bytes on. No grace for a late close (it
    is 0 here), and an API that keeps the connection open after a whole JSON answer: the order
    alone makes the charge exact, however slow the machine."""
    monkeypatch.setattr(relay_module, "SETTLE_GRACE_S", 0.0)
    usage = {"input_tokens": 1000, "output_tokens": 20, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    answer = json.dumps({"id": "msg_1", "type": "message", "role": "assistant", "model": MODEL,
                         "content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn",
                         "stop_sequence": None, "usage": usage}).encode()
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(30)

    def lingering_api() -> None:
        conn, _ = server.accept()
        with conn:
            conn.settimeout(30)
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            length = int(next(v for k, _, v in (ln.partition(b":") for ln in head.split(b"\r\n"))
                              if k.strip().lower() == b"content-length"))
            while len(body) < length:
                body += conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
                         b"connection: close\r\n\r\n%s" % (len(answer), answer))
            time.sleep(0.5)  # the answer is whole; the connection closes later

    api = threading.Thread(target=lingering_api, daemon=True)
    api.start()
    relay = ApiRelay({"ANTHROPIC_API_KEY": FAKE_KEY, "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{server.getsockname()[1]}"})
    try:
        call = relay.open_call("c", None)
        status, _ = send(call, ask(max_tokens=32000, stream=False))
        reading = call.close()  # at once: the relay has not yet read the API's end
    finally:
        relay.close()
        api.join(timeout=30)
        server.close()
    assert status == 200
    assert reading.cost_usd == pytest.approx((1000 * 3.0 + 20 * 15.0) / 1e6)  # not 32,000 tokens' worth
    assert "charged_at_most_usd" not in reading.usage(None)
