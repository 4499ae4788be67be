"""One run, one count (issue "One projection"): what the handlers decide on is what the run shows.

The driver schedules from ``PipelineState`` (the fold ``engine status`` and the audit show) and
decides with the handlers' ``Runtime``. Both count money and agent calls with one meter
(``replay.meter``: agent results and spend recorded without one, ``AgentSpendRecorded``) and the
run's best with one rule (``replay.best``). Folding every replay fixture, recorded and built,
event by event, wherever the two have seen the same events (before each input, after each spend
and at the end) they must hold the same pending effects, spend to the nano-dollar, unknown-cost
spend and agent calls (and at each input the same driven time); MLE-STAR's run-wide fallback (``handlers.mlestar.bestsofar``)
must be the state's best, score and solution, except that Phase 1's safety checks restart it from
the checked s_0 (REQ-P1-030/031): from there on it is the same rule restarted, never better than
the best ever evaluated. The audit's choice of a run's final solution, when nothing named one
yet, is the state's best (``engine.audit.lineage``).

The fixtures together hold every event type of a run (``events/``); the built ones
(``tests/replays/build.py``) exist for the types the recordings never meet.
"""

from __future__ import annotations

import collections
from dataclasses import replace
from pathlib import Path

import pytest

from engine.audit.lineage import final_solution
from engine.audit.runlog import RunLog, load_event_modules
from engine.run.replayer import read_export
from engine.run.strategies import load_strategy
from events.base import Envelope, Event, event_class
from handlers.mlestar.bestsofar import KEY, BestSoFar
from handlers.runtime import Runtime
from replay.best import BestEvaluated
from replay.meter import SPEND_RECORDED
from replay.state import PipelineState, fold
from replay.verify import verify
from store.sqlite import SQLiteEventStore
from tests.replays.build import BUILT
from tests.replays.fixtures import FIXTURES, HERE, FixtureSpec, reseal

LOGS: dict[str, Path] = {f.name: f.path for f in FIXTURES} | {b.name: b.path for b in BUILT}
OLD_SPEND_LOGS = {b.name for b in BUILT if b.spend_v1}
# A campaign's own stream (``campaign:<name>``), never a run's log: no run projection folds them.
NOT_RUN_EVENTS_MODULE = "events.campaign"


def read(name: str) -> list[Envelope]:
    return read_export(LOGS[name])


class Rebased:
    """What MLE-STAR's fallback must hold after Phase 1's checks: the one rule, restarted at the
    leakage check's kept solution (the last check; ``handlers.mlestar.phase1`` rebases there)."""

    def __init__(self) -> None:
        self.best: BestEvaluated | None = None

    def fold(self, env: Envelope, state: PipelineState) -> None:
        p = env.payload
        if env.type == "SafetyCheckApplied" and p["check"] == "leakage":
            self.best = BestEvaluated()
            self.best.restart(p["kept_solution_id"], p["score"])
        elif env.type == "SolutionEvaluated" and self.best is not None:
            self.best.offer(state.score_rule, solution_id=p["solution_id"], score=p["score"],
                            is_executable=p["is_executable"], purpose=p["purpose"],
                            scored_rows=p.get("scored_rows"))


def agree(rt: Runtime, state: PipelineState, rebased: Rebased, where: str) -> None:
    assert sorted(rt.pending_effect_ids) == sorted(state.pending), where
    assert rt.cost_usd == state.budget_cost_usd, (
        f"{where}: the handlers decide on ${rt.cost_usd}, the run's budget figure is ${state.budget_cost_usd}")
    assert rt.spend.usd == state.accumulated_cost_usd, where
    assert rt.agent_calls == state.agent_call_count, where
    assert rt.spend.unknown == state.unknown_cost_calls, where
    tracker = rt.shared.get(KEY)
    if not isinstance(tracker, BestSoFar):   # only MLE-STAR keeps a run-wide fallback
        return
    expected = state.best if rebased.best is None else rebased.best
    assert tracker.best == (None if expected.score is None else (expected.score, expected.solution_id)), (
        f"{where}: the fallback is {tracker.best}, the rule gives {expected}")
    if tracker.best is not None:  # restarted or not, never better than the best ever evaluated
        assert not state.score_rule.improves(tracker.best[0], state.best_score_so_far), where


def fold_both(envelopes: list[Envelope]) -> tuple[Runtime, PipelineState, int]:
    """Feed the runtime as the driver does and fold the state, checking them wherever they have
    seen the same events; returns both at the end and how many points were checked."""
    rt = Runtime(load_strategy(envelopes[0].payload["strategy"]))
    state, rebased, points = PipelineState(), Rebased(), 0
    for env in envelopes:
        kind = event_class(env.type).kind
        if kind == "input":   # the handlers decide from here, with what both have seen so far
            agree(rt, state, rebased, f"before seq {env.seq} ({env.type})")
            points += 1
        state.apply(env)
        rebased.fold(env, state)
        if kind == "input" or env.type == SPEND_RECORDED:
            decided = rt.feed(env.event())
            assert env.type != SPEND_RECORDED or decided == [], f"seq {env.seq}: spend decided something"
        if kind == "input":  # the driven time the handlers decide at is the run's (a stop's included)
            assert rt.now == state.elapsed_seconds, f"seq {env.seq}"
        if env.type == SPEND_RECORDED:
            agree(rt, state, rebased, f"after seq {env.seq} ({env.payload['reason']} spend)")
            points += 1
    agree(rt, state, rebased, "at the end")
    return rt, state, points + 1


@pytest.mark.parametrize("name", sorted(LOGS))
def test_runtime_and_pipeline_state_agree_after_every_input(name: str) -> None:
    envelopes = read(name)
    rt, state, points = fold_both(envelopes)
    assert state.finished and rt.finished and not state.pending
    assert points > len([e for e in envelopes if e.type == SPEND_RECORDED])


@pytest.mark.parametrize("name", sorted(n for n in LOGS if n.startswith("mle-star")))
def test_the_run_shows_the_money_the_handlers_decided_on(name: str) -> None:
    """REQ-OR-037: the total a completed MLE-STAR run reports is the state's when it completed
    (spend recorded without a result included), and so is the CLI's per-phase breakdown."""
    state = PipelineState()
    for env in read(name):
        state.apply(env)
        if env.type == "RunCompleted":
            summary = env.payload["result"]["cost_summary"]
            assert summary["total_cost_usd"] == state.budget_cost_usd
            assert state.cost_breakdown()["total_cost_usd"] == round(state.accumulated_cost_usd, 6)
            if "phase2_per_path_cost_usd" in summary:   # runs recorded since the run's result holds it
                shown = state.cost_breakdown()["phase2_per_path_cost_usd"]
                assert [round(c, 6) for c in summary["phase2_per_path_cost_usd"]] == [
                    shown.get(f"path-{i}", 0.0) for i in range(len(summary["phase2_per_path_cost_usd"]))]
    # One ledger: only spend an old engine recorded outside its handlers' count is shown apart.
    assert (state.budget_cost_usd == state.accumulated_cost_usd) == (name not in OLD_SPEND_LOGS)


def test_spend_without_a_result_counts_in_both_views() -> None:
    """The built budget run holds every kind of spend without a result; the handlers' budget
    decisions saw it: the shutdown's recorded spend is the state's at that point."""
    envelopes = read("mle-star-sim-budget")
    reasons = collections.Counter(e.payload["reason"] for e in envelopes if e.type == SPEND_RECORDED)
    assert set(reasons) == {"preflight", "cancelled", "crashed"}
    state = PipelineState()
    checked = 0
    for env in envelopes:
        if env.type in ("BudgetWarning", "BudgetExhausted"):
            assert env.payload["spent_usd"] == state.accumulated_cost_usd, env.type
            checked += 1
        state.apply(env)
    assert checked == 2 and state.unknown_cost_calls == reasons["crashed"]
    without = sum(e.payload["cost_usd"] or 0.0 for e in envelopes if e.type in ("AgentCallCompleted", "AgentCallFailed"))
    assert state.accumulated_cost_usd > without


BUDGET_STOP_LOGS = ("mle-star-sim-budget-stop", "evolve-sim-budget-stop")


@pytest.mark.parametrize("name", BUDGET_STOP_LOGS)
def test_a_budget_stop_is_one_count_and_stops_the_search(name: str) -> None:
    """A call stopped for want of money (``AgentCallFailed`` v3 ``stop="budget"``), beside spend
    recorded without a result: both views count its money, the handlers count the stop, and the
    search ends on it, MLE-STAR starting no new phase, evolve no new step, with no dead node."""
    envelopes = read(name)
    stops = [e for e in envelopes if e.type == "AgentCallFailed" and e.payload.get("stop") == "budget"]
    assert stops and any(e.type == SPEND_RECORDED for e in envelopes)
    rt, state, _ = fold_both(envelopes)
    assert rt.money.budget_stops == len(stops) and state.status == "completed"
    if name.startswith("mle-star"):
        assert [e.payload["reason"] for e in envelopes if e.type == "FinalizeNow"] == ["budget"]
        metered = [e for e in envelopes if e.type == "AgentCallCompleted" and e.payload["usage"].get("cost_source") == "relay"]
        assert metered   # results whose cost is the relay's meter count like any other
    else:
        (stopped,) = [e for e in envelopes if e.type == "EvoEvolutionStopped"]
        assert stopped.payload["reason"] == "cost_limit"
        nodes = [e for e in envelopes if e.type == "EvoNodeAppended"]
        assert not [n for n in nodes if n.payload["dead"]]
        assert "node-" + stops[0].payload["effect_id"].split("step-")[1].split("/")[0] not in {
            n.payload["node_id"] for n in nodes}   # the stopped draft made no node


@pytest.mark.parametrize("name", sorted(LOGS))
def test_the_audit_falls_back_to_the_state_s_best(name: str) -> None:
    """``engine audit lineage`` on a run that has named no final solution yet picks the best
    evaluated one by the same rule (checked at every phase boundary until one is named)."""
    envelopes = read(name)
    for i, env in enumerate(envelopes):
        if env.type != "PhaseCompleted":
            continue
        log = RunLog(run_id=env.run_id, envelopes=envelopes[: i + 1], state=fold(envelopes[: i + 1]))
        sid, how = final_solution(log)
        if how == "best SolutionEvaluated":
            assert sid == log.state.best_solution_id
        elif how.startswith("last SolutionRecorded"):
            assert log.state.best_solution_id is None
        else:
            break


@pytest.mark.parametrize("name", sorted(b.name for b in BUILT))
def test_built_fixture_replays_without_divergence(name: str, tmp_path: Path) -> None:
    """A built log is the handlers' own (``tests/replays/build.py``), sealed like an export; if a
    change of behaviour is intended, build it again: ``python -m tests.replays.build NAME``."""
    envelopes = read(name)
    assert envelopes[0].type == "RunStarted" and envelopes[-1].type in ("RunCompleted", "RunFailed")
    divergence, _ = verify(envelopes, lambda: Runtime(load_strategy(envelopes[0].payload["strategy"])))
    assert divergence is None, f"{name} no longer replays; rebuild it if intended.\n{divergence.describe()}"
    store = SQLiteEventStore(tmp_path / "e.db")
    with open(LOGS[name], encoding="utf-8") as fh:
        assert store.import_jsonl(fh) == envelopes[0].run_id
    assert store.verify_chain(envelopes[0].run_id) is None
    store.close()


def run_event_types() -> dict[str, type[Event]]:
    """Every event type of a run in ``events/`` (each one registered under its name)."""
    load_event_modules()

    def below(cls: type[Event]) -> list[type[Event]]:
        return [c for sub in cls.__subclasses__() for c in (sub, *below(sub))]

    found = {c.type_name: c for c in below(Event) if c.type_name and c.__module__.startswith("events.")}
    assert all(event_class(name) is cls for name, cls in found.items())
    return {name: cls for name, cls in found.items() if cls.__module__ != NOT_RUN_EVENTS_MODULE}


def test_the_fixtures_hold_every_event_type_of_a_run() -> None:
    held = collections.Counter(e.type for name in LOGS for e in read(name))
    types = run_event_types()
    assert len(types) > 50 and "AgentSpendRecorded" in types and "CampaignStarted" not in types
    missing = sorted(set(types) - set(held))
    assert not missing, f"no replay fixture holds {missing}: add them to a built fixture (tests/replays/build.py)"
    assert set(held) <= set(types)


def test_every_fixture_file_is_checked() -> None:
    assert sorted(p.stem for p in HERE.glob("*.jsonl")) == sorted(LOGS)


@pytest.mark.parametrize("spec", FIXTURES, ids=[f.name for f in FIXTURES])
def test_one_run_context_for_the_handlers_and_the_executors(spec: FixtureSpec) -> None:
    """The handlers' RunContext (built by the runtime from RunStarted) and the executors' (built
    from the folded state) are the same value."""
    envelopes = read_export(spec.path)
    rt = Runtime(load_strategy(envelopes[0].payload["strategy"]))
    rt.feed(envelopes[0].event())
    state = PipelineState()
    state.apply(envelopes[0])
    assert rt.context is not None
    assert state.context().run_id == spec.run_id and rt.context.run_id == ""  # the log's envelope names it
    assert replace(state.context(), run_id="") == rt.context
    assert state.context() is state.context()  # validated once


def test_an_old_logs_spend_stays_out_of_its_decisions() -> None:
    """AgentSpendRecorded v1 (events/spend.py): a log written while the handlers did not count that
    spend replays to its decisions because the upcaster keeps it out of the budget figure; counted,
    the same log diverges (its budget warning came later). ``engine status`` shows all of it."""
    envelopes = read("mle-star-sim-budget-spend-v1")
    spend = [e for e in envelopes if e.type == SPEND_RECORDED]
    assert spend and all(e.version == 1 and "in_budget" not in e.payload for e in spend)
    state = PipelineState()
    for env in envelopes:
        state.apply(env)
    assert state.accumulated_cost_usd > state.budget_cost_usd
    main = load_strategy(envelopes[0].payload["strategy"])
    assert verify(envelopes, lambda: Runtime(main))[0] is None
    counted = reseal([{**e.model_dump(mode="json"), "version": 2, "payload": {**e.payload, "in_budget": True}}
                      if e.type == SPEND_RECORDED else e.model_dump(mode="json") for e in envelopes])
    assert verify(counted, lambda: Runtime(main))[0] is not None


def test_an_old_logs_failed_calls_load_without_usage(monkeypatch) -> None:
    """AgentCallFailed v3 (events/core.py) kept no usage: a log of that engine loads through the
    upcaster (an empty usage), replays to its decisions, and shows the same money; without the
    upcaster it does not load."""
    from events.base import _UPCASTERS
    from events.core import AgentCallFailed

    envelopes = read("mle-star-sim-budget-stop-failed-v3")
    failed = [e for e in envelopes if e.type == "AgentCallFailed"]
    assert failed and all(e.version == 3 and "usage" not in e.payload for e in failed)
    assert any(e.payload["stop"] == "budget" for e in failed)
    assert all(isinstance(e.event(), AgentCallFailed) and e.event().usage == {} for e in failed)
    main = load_strategy(envelopes[0].payload["strategy"])
    assert verify(envelopes, lambda: Runtime(main))[0] is None
    current = fold(read("mle-star-sim-budget-stop"))
    assert fold(envelopes).accumulated_cost_usd == pytest.approx(current.accumulated_cost_usd)
    monkeypatch.delitem(_UPCASTERS, ("AgentCallFailed", 3))
    with pytest.raises(ValueError, match="no upcaster for AgentCallFailed from v3"):
        failed[0].event()
