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

import json
from pathlib import Path
from typing import Any

import pytest

from engine.agents.claude.prices import price_of
from tests.claude_cli.conftest import engine, engine_env, events
from tests.support.canned_model import CannedModel

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
    done, db, env = start(tmp_path, api.url, "no-budget", "--json")
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
