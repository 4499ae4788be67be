"""Money with the installed CLI's own default model (issue 61), through the REAL bundled CLI.

A fresh install's CLI resolves the engine's default ``model`` ("sonnet") to a model id of its
release, which the engine's price list may not know. The model is never named here: it is the
one the CLI's first request asked the Messages-API stand-in for (the start-up check), so a new
CLI release is exercised as it is. Without a price the relay cannot price the calls, and each is
recorded at the cost the CLI itself reported (``usage.cost_source`` "cli_reported"); with one,
the relay's figure, which equals the CLI's ("price_table"). Either way a run costs what the CLI
says, not $0, and a small budget still ends with a valid submission.
"""

from __future__ import annotations

import base64
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from engine.agents.claude.prices import price_of
from tests.claude_cli.conftest import engine, engine_env, events
from tests.support.canned_model import CannedModel, effect_of
from tests.support.messages_api import Exchange, Reply, Text, ToolCall, Tools
from tests.support.shared_runs import LEAN_RUN

pytestmark = pytest.mark.slow

CALLS = ("AgentCallCompleted", "AgentCallFailed")


def default_model_env(api_url: str) -> dict[str, str]:
    """A user's environment with no model chosen: the CLI asks for its own default."""
    env = engine_env(api_url)
    env.pop("MLE_STAR_MODEL")
    return env


def start(tmp_path: Path, api_url: str, run_id: str, *extra: str) -> tuple[Any, Path, dict[str, str]]:
    db = tmp_path / "runs" / "engine.db"
    env = default_model_env(api_url)
    done = engine(["start", "--task", "iris", "--agent", "claude", "--preset", "quick", "--db", str(db),
                   "--run-id", run_id, *extra], env, timeout=900)
    return done, db, env


def the_cli_default_model(api: Any) -> str:
    """What the installed CLI asked for first: the start-up check's request."""
    calls = api.message_calls()
    assert calls, "the CLI sent no request"
    return calls[0].model


def status(run_id: str, db: Path, env: dict[str, str]) -> dict[str, Any]:
    shown = engine(["status", run_id, "--db", str(db), "--json"], env)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    return json.loads(shown.stdout)


def expected_source(model: str) -> str:
    return "cli_reported" if price_of(model, {}) is None else "price_table"


def test_without_a_budget_each_call_costs_what_the_cli_reported_for_its_default_model(tmp_path, stand_in):
    api = stand_in(CannedModel())
    # how each call is priced is the point, not how many calls the search makes: every phase, fewer calls
    done, db, env = start(tmp_path, api.url, "no-budget", "--json", *LEAN_RUN)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    model = the_cli_default_model(api)
    assert "warning:" not in done.stderr   # nothing to warn about without a budget

    log = events(db, "no-budget")
    calls = [e for e in log if e["type"] in CALLS]
    assert calls and all(e["type"] == "AgentCallCompleted" for e in calls), [e.get("error") for e in calls]
    for call in calls:
        cli_cost = call["usage"]["relay"]["cli_cost_usd"]
        assert call["cost_usd"] > 0 and call["cost_usd"] == pytest.approx(cli_cost, rel=1e-6, abs=1e-9), call["usage"]
        assert call["usage"]["cost_source"] == expected_source(model), (model, call["usage"])
    (check,) = [e for e in log if e["type"] == "AgentSpendRecorded" and e["reason"] == "preflight"]
    assert check["cost_usd"] > 0

    shown = status("no-budget", db, env)
    breakdown = shown["cost_breakdown"]
    recorded = sum(e["cost_usd"] for e in calls) + check["cost_usd"]
    assert shown["cost_usd"] > 0 and shown["cost_usd"] == pytest.approx(recorded, abs=1e-6)
    assert breakdown["calls_with_unknown_cost"] == 0 and breakdown["calls_charged_at_cap"] == 0
    priced_by_cli = len(calls) if expected_source(model) == "cli_reported" else 0
    assert breakdown["calls_priced_by_cli_cost"] == priced_by_cli, (model, breakdown)
    print("DEFAULT-MODEL-COST", json.dumps({"model": model, "calls": len(calls), "cost_usd": shown["cost_usd"],
                                            "source": expected_source(model)}))


def test_a_small_budget_warns_before_the_first_call_and_ends_with_a_valid_submission(tmp_path, stand_in):
    api = stand_in(CannedModel())
    budget = 0.05
    done, db, env = start(tmp_path, api.url, "small", "--max-budget", str(budget))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    model = the_cli_default_model(api)
    if price_of(model, {}) is None:  # named, with how to price it, before the run (and its first call) began
        warned = done.stderr.find(f"warning: the Claude CLI asks for model {model}")
        assert 0 <= warned < done.stderr.index("run small started"), done.stderr[-3000:]
        assert "model_prices=" in done.stderr
    else:
        assert "has no price" not in done.stderr

    log = events(db, "small")
    calls = [e for e in log if e["type"] in CALLS]
    costs = [e["cost_usd"] for e in calls]
    assert calls and all(c is not None for c in costs)
    assert all(e["usage"]["cost_source"] == expected_source(model) for e in calls if e["cost_usd"])
    shown = status("small", db, env)
    assert shown["status"] == "completed" and shown["cost_breakdown"]["calls_with_unknown_cost"] == 0
    assert 0 < shown["cost_usd"] <= budget + max(costs), (shown["cost_usd"], costs)
    graded = engine(["grade", "small", "--db", str(db), "--json"], env)
    assert graded.returncode == 0, graded.stdout + graded.stderr
    report = json.loads(graded.stdout[graded.stdout.index("{"):])
    assert report["submission_exists"] and report["valid_submission"], report
    print("SMALL-BUDGET-COST", json.dumps({"model": model, "budget_usd": budget, "cost_usd": shown["cost_usd"],
                                           "calls": len(calls), "most_one_call_usd": max(costs)}))


MARK = "SHELL-SENT-REQUEST"


def shell_request(model: str) -> str:
    """A Bash command: one model request of the shell's own, for ``model``, to wherever the
    environment says the API is (inside the sandbox: the call's relay)."""
    probe = (f"import json, os, urllib.request\n"
             f"body = json.dumps({{'model': {model!r}, 'max_tokens': 4000, "
             f"'messages': [{{'role': 'user', 'content': {MARK!r}}}]}}).encode()\n"
             "url = os.environ.get('ANTHROPIC_BASE_URL', 'https://api.anthropic.com').rstrip('/') + '/v1/messages'\n"
             "headers = {'x-api-key': os.environ.get('ANTHROPIC_API_KEY', ''), 'content-type': 'application/json',"
             " 'anthropic-version': '2023-06-01'}\n"
             "print(urllib.request.urlopen(urllib.request.Request(url, data=body, headers=headers), timeout=30).status)\n")
    return f"echo {base64.b64encode(probe.encode()).decode()} | base64 -d | python3"


class ShellAsksToo:
    """The canned model, except that a call's first Bash turn has the agent's shell send a model
    request of its own, for the model the CLI itself asked for; answered at length."""

    def __init__(self) -> None:
        self.canned = CannedModel()
        self.asked_from: set[str] = set()   # the effects whose shell was told to ask
        self.answered = 0
        self._lock = threading.Lock()

    def __call__(self, exchange: Exchange) -> Reply:
        if any(MARK in text for text in exchange.user_texts()):
            with self._lock:
                self.answered += 1
            return Text("spent", output_tokens=3000)
        if "Bash" in exchange.tool_names and exchange.turn() == 0:
            with self._lock:
                self.asked_from.add(effect_of(exchange))
            return Tools([ToolCall("Bash", {"command": shell_request(exchange.model), "description": "ask"})])
        return self.canned(exchange)


def test_a_call_whose_shell_asked_the_unpriced_model_too_is_not_priced_by_the_cli_figure(tmp_path, stand_in):
    """The CLI's figure covers the CLI's requests only: a call whose sandbox sent more of the
    unpriced model than the CLI reports is of unknown cost without a budget (never the CLI's
    smaller figure); a model with a price is metered by the relay, shell and all."""
    model = ShellAsksToo()
    api = stand_in(model)
    done, db, env = start(tmp_path, api.url, "shell", "--json", *LEAN_RUN)  # every phase, fewer calls
    assert "{" in done.stdout, done.stdout[-2000:] + done.stderr[-3000:]
    default = the_cli_default_model(api)
    assert model.answered >= 1 and model.asked_from   # the shell's requests reached the model
    calls = {e["effect_id"]: e for e in events(db, "shell") if e["type"] in CALLS}
    asked = [calls[effect] for effect in sorted(model.asked_from) if effect in calls]
    assert asked
    unpriced = price_of(default, {}) is None
    for call in asked:
        source = call["usage"]["cost_source"]
        assert source == ("unknown" if unpriced else "price_table"), (default, call["usage"])
        assert (call["cost_usd"] is None) == unpriced
    others = [e for effect, e in calls.items() if effect not in model.asked_from]
    assert all(e["usage"]["cost_source"] == expected_source(default) for e in others if e.get("usage"))
    shown = status("shell", db, env)
    assert shown["cost_breakdown"]["calls_with_unknown_cost"] == sum(e["cost_usd"] is None for e in calls.values())
