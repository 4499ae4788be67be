"""Every dollar through one meter (issue 26, must-show 1), through the REAL bundled Claude CLI.

``engine start --agent claude --preset quick --max-budget 2`` as a user runs it, against a
Messages-API stand-in whose model, on the first Bash turn of each call, has the shell send model
requests of its own (python's urllib) to whatever its environment names — the engine's relay —
each asking for 2 M output tokens (about $30 at list price), and leave a sender behind that keeps
trying after the call. Each such request must be metered (lowered to what the call's cap pays
for) or refused; the money the stand-in served (its own log of usage × price) stays within the
budget plus one call's cap, and the run records exactly that money. REQ-OR-028/029.
"""

from __future__ import annotations

import base64
import json
import re
import threading
from pathlib import Path

import pytest

from engine.agents.claude.prices import price_of, usage_cost
from tests.claude_cli.conftest import MODEL, engine, engine_env, events
from tests.support.canned_model import CannedModel
from tests.support.messages_api import Exchange, Reply, Text, ToolCall, Tools

pytestmark = pytest.mark.slow

MARK = "SHELL-SENT-REQUEST"
ASKED_TOKENS = 2_000_000
# What the agent's shell runs: three requests now, then a sender left behind that keeps trying
# for 20 s (after its call ended, if anything of the call's sandbox survived it).
PROBE = f'''
import json, os, subprocess, sys, time, urllib.error, urllib.request
url = os.environ.get("ANTHROPIC_BASE_URL", "https://api.anthropic.com").rstrip("/")
key = os.environ.get("ANTHROPIC_API_KEY", "")
body = json.dumps({{"model": "{MODEL}", "max_tokens": {ASKED_TOKENS},
                   "messages": [{{"role": "user", "content": "{MARK}"}}]}}).encode()
def send(path="/v1/messages", method="POST"):
    request = urllib.request.Request(url + path, data=body if method == "POST" else None, method=method,
                                     headers={{"x-api-key": key, "anthropic-version": "2023-06-01",
                                              "content-type": "application/json"}})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return str(answer.status)
    except urllib.error.HTTPError as exc:
        return str(exc.code)
    except Exception as exc:
        return "error:" + type(exc).__name__
with open("probe.log", "a") as log:
    if sys.argv[1] == "now":
        log.write("now " + " ".join(send() for _ in range(3)) + "\\n")
        log.write("paths " + " ".join(send(p, m) for m, p in (("GET", "/v1/models"), ("POST", "/v1/files"),
                                                              ("POST", "/v1/messages/batches"))) + "\\n")
        subprocess.Popen([sys.executable, __file__, "later"], start_new_session=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    else:
        for _ in range(80):
            log.write("later " + send() + "\\n")
            log.flush()
            time.sleep(0.25)
'''
COMMAND = (f"echo {base64.b64encode(PROBE.encode()).decode()} | base64 -d > probe.py && python3 probe.py now; "
           "cat probe.log")


class ShellSpender:
    """The canned model, except that the first Bash turn of a call runs :data:`PROBE`, and the
    shell's own requests are answered as a model that writes at length (``max_tokens``, or 2 M)."""

    def __init__(self) -> None:
        self.canned = CannedModel()
        self.attacks = 0
        self._lock = threading.Lock()

    def __call__(self, exchange: Exchange) -> Reply:
        if any(MARK in text for text in exchange.user_texts()):
            return Text("spent", output_tokens=ASKED_TOKENS)
        if "Bash" in exchange.tool_names and exchange.turn() == 0:
            with self._lock:
                self.attacks += 1
            return Tools([ToolCall("Bash", {"command": COMMAND, "description": "spend"})])
        return self.canned(exchange)


def served_usd(served: list[dict]) -> float:
    total = 0.0
    for answer in served:
        price = price_of(answer["model"], {})
        assert price is not None, answer
        total += usage_cost(price, answer["usage"])
    return total


def test_requests_the_agents_shell_sends_are_metered_or_refused_and_the_run_records_what_was_served(
        tmp_path, stand_in):
    model = ShellSpender()
    api = stand_in(model)
    db = tmp_path / "runs" / "engine.db"
    budget = 2.0
    done = engine(["start", "--task", "iris", "--agent", "claude", "--preset", "quick", "--db", str(db),
                   "--run-id", "meter", "--max-budget", str(budget), "--json"], engine_env(api.url), timeout=900)
    assert "{" in done.stdout, done.stdout[-2000:] + done.stderr[-3000:]
    log = events(db, "meter")
    assert model.attacks >= 1  # the shell did send requests of its own

    # Every request of the shell that the stand-in answered was first lowered to what its call's
    # cap paid for: none asked 2 M tokens of the API.
    shell_sent = [e for e in api.message_calls() if MARK in json.dumps(e.body)]
    assert shell_sent and all(e.body["max_tokens"] < ASKED_TOKENS for e in shell_sent)
    probes = [line for p in sorted((db.parent / "meter").rglob("probe.log")) for line in p.read_text().splitlines()]
    now = [s for line in probes if line.startswith("now ") for s in line.split()[1:]]
    later = [line.split()[1] for line in probes if line.startswith("later ")]
    paths = [s for line in probes if line.startswith("paths ") for s in line.split()[1:]]
    assert now and set(now) <= {"200", "402"} and "402" in now, probes
    assert paths and set(paths) == {"403"}, probes          # only the Messages API is relayed
    # The sender left behind: refused while its call was in flight, cut off once it ended.
    assert all(s in ("402", "403") or s.startswith("error:") for s in later), later

    # The money: what the stand-in served, priced at the list price, is what the run recorded.
    served = served_usd(api.served)
    spend_events = [e for e in log if e["type"] in ("AgentCallCompleted", "AgentCallFailed", "AgentSpendRecorded")]
    recorded = sum(e["cost_usd"] or 0.0 for e in spend_events)
    assert all(e["cost_usd"] is not None for e in spend_events)
    # Exactly, unless an answer was not read to its end (its call cancelled by the run while the
    # answer was on its way): the relay charged that request at its most, which the call's usage says.
    at_most = sum(((e.get("usage") or {}).get("relay") or {}).get("charged_at_most_usd", 0.0) for e in spend_events)
    assert recorded - at_most - 1e-6 <= served <= recorded + 1e-6, (recorded, served, at_most)
    caps = [float(c) for e in log if e["type"] == "AgentCallFailed" for c in re.findall(r"cap of \$([0-9.]+)", e["error"])]
    one_call = max(caps + [e["cost_usd"] or 0.0 for e in spend_events])
    assert served <= budget + one_call, (served, budget, one_call)
    # A call the relay stopped is a budget stop in the log, not an agent's failure.
    stopped = [e for e in log if e["type"] == "AgentCallFailed" and "relay refused" in e["error"]]
    assert stopped and all(e["error"].startswith("budget") for e in stopped)
    # ... and its usage says what the meter saw, as a completed call's does (AgentCallFailed v4).
    assert all(e["usage"]["cost_source"] == "price_table" and e["usage"]["relay"]["requests"] >= 1 for e in stopped)

    figures = {"budget_usd": budget, "served_usd": round(served, 6), "recorded_usd": round(recorded, 6),
               "one_call_cap_usd": round(one_call, 6), "charged_at_most_usd": at_most, "shell_requests_answered": len(shell_sent),
               "shell_requests_now": now, "shell_requests_later": later, "calls": len(spend_events),
               "status": json.loads(done.stdout[done.stdout.index("{"):]).get("status")}
    Path(tmp_path / "figures.json").write_text(json.dumps(figures))
    print("RELAY-METER-FIGURES", json.dumps(figures))
