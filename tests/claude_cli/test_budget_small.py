"""Small budgets with the REAL bundled Claude CLI against the Messages-API stand-in (issue 26):
a budget that fits one candidate and finalization but not the preset ends with a valid
submission within the budget plus one call, a call cut by its cap is a budget stop (never an
execution error), a budget that cannot fit one candidate fails before any call, and ``evolve``
stops its search at the cost limit without a dead node for want of money.
REQ-OR-028/029/030."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from engine.audit.runlog import load_event_modules
from engine.tasks import resolve_task
from events.base import event_class
from handlers.money import least_budget_usd
from tests.claude_cli.conftest import engine, engine_env, events
from tests.replays.fake_cli import recognise
from tests.support.canned_model import CannedModel
from tests.support.evolve_model import EvolutionAnswers, recognise_evolution
from tests.support.messages_api import Exchange, Reply, Text, ToolCall, Tools, tokens

# The roles that write code work like a real model does: many tool turns in one call, each
# turn's output (a big listing) making every later turn's request bigger and dearer.
CODE_WRITERS = frozenset({"init", "merger", "coder", "ablation", "ensembler", "test", "debugger",
                          "draft", "merge", "mutate", "evo_debug"})
TOOL_TURNS = 4
LISTING_CHARS = 12_000
# claude-sonnet-4-5's list price (US dollars per million tokens): what the CLI charges for the
# stand-in's usage, so the test can price what the stand-in served.
INPUT_PER_MTOK, OUTPUT_PER_MTOK = 3.0, 15.0


class Laborious(CannedModel):
    """The canned answers, after ``TOOL_TURNS`` Bash turns in every code-writing call; keeps its
    own log of the usage it served (the request's and the answer's tokens, as it reports them)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._served_lock = threading.Lock()
        self.served_usd = 0.0
        self.tool_turns = 0

    def role(self, exchange: Exchange) -> str:
        for text in exchange.user_texts():
            try:
                return recognise(text)[0]
            except SystemExit:
                found = recognise_evolution(text)
                if found is not None:
                    return found[0]
        return ""

    def __call__(self, exchange: Exchange) -> Reply:
        reply = self._reply(exchange)
        # The usage the stand-in reports for this answer (tests/support/messages_api.py), priced.
        usd = (tokens(json.dumps(exchange.body)) * INPUT_PER_MTOK
               + tokens(json.dumps(_content_blocks(reply))) * OUTPUT_PER_MTOK) / 1e6
        with self._served_lock:
            self.served_usd += usd
        return reply

    def _reply(self, exchange: Exchange) -> Reply:
        if (exchange.turn() < TOOL_TURNS and "Bash" in exchange.tool_names
                and self.role(exchange) in CODE_WRITERS):
            with self._served_lock:
                self.tool_turns += 1
            return Tools([ToolCall("Bash", {"command": f"python3 -c \"print('x' * {LISTING_CHARS})\"",
                                            "description": f"work step {exchange.turn() + 1}"})])
        return super().__call__(exchange)


def _content_blocks(reply: Reply) -> list[dict[str, Any]]:
    if isinstance(reply, Text):
        return [{"type": "text", "text": reply.text}]
    if isinstance(reply, Tools):
        return ([{"type": "text", "text": reply.text}] if reply.text else []) + [
            {"type": "tool_use", "id": c.id, "name": c.name, "input": c.input} for c in reply.calls]
    return []


def _costs(log: list[dict[str, Any]]) -> list[float]:
    return [e["cost_usd"] or 0.0 for e in log if e["type"] in ("AgentCallCompleted", "AgentCallFailed")]


def _graded(run_id: str, db: Any, env: dict[str, str]) -> dict[str, Any]:
    graded = engine(["grade", run_id, "--db", str(db), "--json"], env)
    assert graded.returncode == 0, graded.stdout + graded.stderr
    return json.loads(graded.stdout[graded.stdout.index("{"):])


def test_a_budget_below_one_candidate_and_finalization_fails_before_any_call(tmp_path, stand_in):
    api = stand_in(CannedModel())
    db = tmp_path / "runs" / "engine.db"
    done = engine(["start", "--task", "iris", "--agent", "claude", "--preset", "quick", "--db", str(db),
                   "--max-budget", "0.001"], engine_env(api.url), timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    least = least_budget_usd("mle-star")
    assert "--max-budget 0.001" in done.stderr and f"--max-budget {least:g}" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert api.exchanges == [] and api.other_requests == []   # not even the start-up check
    assert not db.exists()


@pytest.mark.slow
def test_a_budget_for_one_candidate_ends_with_a_valid_submission_and_cut_calls_are_budget_stops(tmp_path, stand_in):
    """The quick preset's code-writing calls cost about a sixth of this budget each ($0.2): it pays
    for a candidate and finalization, not for the preset (a dozen of them). The concurrent second A_init is cut at its
    cap (the first holds most of the money): a budget stop, and the run finalizes with the rest."""
    model = Laborious()
    api = stand_in(model)
    db = tmp_path / "runs" / "engine.db"
    budget = 1.2
    env = engine_env(api.url)
    done = engine(["start", "--task", "iris", "--agent", "claude", "--preset", "quick", "--db", str(db),
                   "--run-id", "small", "--max-budget", str(budget), "--json"], env, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    summary = json.loads(done.stdout[done.stdout.index("{"):])
    assert summary["status"] == "completed" and summary["submission_path"], summary
    log = events(db, "small")

    stops = [e for e in log if e["type"] == "AgentCallFailed" and e.get("stop") == "budget"]
    failures = [(e["effect_id"], e["error"][:200]) for e in log if e["type"] == "AgentCallFailed" and not e.get("stop")]
    assert stops, "no call was stopped by the budget: the budget no longer tests a small budget"
    assert all(e["error"].startswith("budget stop") for e in stops)
    assert not [f for f in failures if "budget" in f[1]], failures   # no budget cut reported as a failure
    assert any(e["cost_usd"] for e in stops), "no call was cut at its cap (only refusals)"
    # The search stopped for the budget (no new phase after the stop) and finalization ran.
    assert any(e["type"] == "FinalizeNow" and e["reason"] == "budget" for e in log)
    load_event_modules()
    ended = next(i for i, e in enumerate(log) if e["type"] == "RunCompleted")
    assert not [e["type"] for e in log[ended + 1:] if event_class(e["type"]).kind in ("decision", "remark")]
    notes = " ".join(e.get("message", "") + json.dumps(e.get("data", {})) for e in log if e["type"] == "Note")
    assert "execution error" not in notes
    assert model.tool_turns >= TOOL_TURNS * 2   # the code-writing calls really took many turns

    completed = next(e for e in log if e["type"] == "RunCompleted")
    costs = _costs(log)
    recorded = completed["result"]["cost_summary"]["total_cost_usd"]
    assert recorded == pytest.approx(summary["cost_usd"]) and recorded <= budget + max(costs), (recorded, max(costs))
    assert model.served_usd == pytest.approx(recorded, rel=0.02), (model.served_usd, recorded)
    per_path = completed["result"]["cost_summary"]["phase2_per_path_cost_usd"]
    assert isinstance(per_path, list) and len(per_path) == 2
    report = _graded("small", db, env)
    assert report["submission_exists"] and report["valid_submission"], report


@pytest.mark.slow
def test_evolve_on_claude_with_a_small_budget_stops_at_the_cost_limit_without_dead_nodes(tmp_path, stand_in):
    answers = EvolutionAnswers(resolve_task("iris", tmp_path / "task").description)
    model = Laborious(evolution=answers)
    api = stand_in(model)
    db = tmp_path / "runs" / "engine.db"
    budget = 0.6
    env = engine_env(api.url)
    done = engine(["start", "--task", "iris", "--strategy", "evolve", "--agent", "claude", "--preset", "quick",
                   "--db", str(db), "--run-id", "evo-small", "--max-budget", str(budget), "--json"], env, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    summary = json.loads(done.stdout[done.stdout.index("{"):])
    assert summary["status"] == "completed" and summary["submission_path"], summary
    log = events(db, "evo-small")

    (stopped,) = [e for e in log if e["type"] == "EvoEvolutionStopped"]
    assert stopped["reason"] == "cost_limit", stopped
    nodes = [e for e in log if e["type"] == "EvoNodeAppended"]
    assert nodes and len(nodes) < 12                     # the preset's 12 steps did not fit
    dead = [(n["node_id"], n["failure"][:200]) for n in nodes if n["dead"]]
    assert not dead, dead
    # Every call that did not answer was stopped by the budget: none is an agent's failure.
    assert not [(e["effect_id"], e["error"][:200]) for e in log if e["type"] == "AgentCallFailed" and not e.get("stop")]
    completed = next(e for e in log if e["type"] == "RunCompleted")
    assert summary["cost_usd"] <= budget + max(_costs(log)), (summary["cost_usd"], completed["result"])
    report = _graded("evo-small", db, env)
    assert report["submission_exists"] and report["valid_submission"], report
