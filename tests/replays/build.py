"""Build the hand-built replay fixtures: ``python -m tests.replays.build [NAME ...|--all|--list]``.

The recorded fixtures (``tests/replays/record.py``) are whole runs of the engine on real tasks;
some event types never occur in them: spend recorded without a result (the start-up check, a
cancelled call, a call cut by a crash), a driver stopped and resumed, budget and deadline cuts,
failed paths, phases and runs. Each built fixture is a short run of the real strategy in memory,
driven the way ``engine.run.driver`` drives one:

* its decisions are the handlers' own: every input is fed through ``handlers.runtime.Runtime``
  and the decisions it returns are appended with it, caused by it;
* its inputs come from scripted worlds (``tests.pipeline.scripted_agent``,
  ``tests.evolution.scripted``); an effect takes time (``World.seconds``), a timer fires at its
  time, the earliest finish is delivered next (ties in request order);
* the bookkeeping the driver and the agent executor add is added where they add it:
  ``DriverStarted`` and the start-up check's spend at every session, the spend a cancelled agent
  call reports right after the decision that cancelled it, ``DriverStopped`` with the spend of
  the calls a stop abandoned, and on a resume after a crash the calls cut by it (spend unknown);
  every resume rebuilds the handlers from the log so far (``replay.verify``), as the driver does.

Like the recordings they are never edited by hand, and built again only when a change of the
handlers' behaviour is intended; a build that does not replay cleanly is not written.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from engine.run.strategies import load_strategy
from events.base import Envelope, Event, NewEvent
from events.core import (
    AgentCallCompleted,
    AgentCallFailed,
    AgentCallRequested,
    DriverStarted,
    DriverStopped,
    EffectCancelled,
    EvaluationCompleted,
    EvaluationRequested,
    Note,
    RunCompleted,
    RunFailed,
    RunStarted,
    SolutionRecorded,
    TimerFired,
    TimerRequested,
)
from events.domain import EvaluationResult, PipelineConfig, TaskDescription
from events.hidden import HiddenSliceDrawn
from events.spend import AgentSpendRecorded
from handlers.mlestar.pipeline import main as mle_star
from handlers.patches import adopted_by_new_runs
from handlers.runtime import Runtime
from handlers.workflow import Workflow
from replay.verify import verify
from tests.replays.fixtures import HERE, reseal, write_jsonl

AgentAnswer = Callable[[AgentCallRequested], AgentCallCompleted | AgentCallFailed | str]
EvalAnswer = Callable[[EvaluationRequested, str], EvaluationCompleted | EvaluationResult]
BACKEND = "scripted"
CLOCK_START = datetime(2026, 1, 1, tzinfo=timezone.utc)   # recorded_at = this + the run's driven time
STOP_SECONDS = 0.25   # driven time from the last result to DriverStopped: the next session starts there


@dataclass
class World:
    """Everything outside the handlers, scripted."""

    agent: AgentAnswer
    evaluate: EvalAnswer
    seconds: Callable[[Any], float] = lambda request: 1.0          # how long an agent call or evaluation takes
    cancelled_usd: Callable[[AgentCallRequested], float | None] = lambda request: None  # a cancelled call's spend
    preflight_usd: float | None = None     # the backend's start-up check, at every session
    # After this many results, at the first moment an agent call is in flight: the driver is
    # stopped by a signal / the engine dies; either way the run is resumed at once.
    stop_after: int | None = None
    crash_after: int | None = None
    # Bookkeeping ``create_run`` appends with RunStarted and its decisions (e.g. HiddenSliceDrawn).
    at_creation: tuple[Event, ...] = ()


@dataclass(frozen=True)
class BuiltFixture:
    name: str
    about: str
    strategy: str
    make: Callable[[], tuple[RunStarted, World]]
    # Written as an engine from before AgentSpendRecorded v2 wrote it: its handlers never counted
    # that spend (so the spend is fed to them with in_budget=False), and the log holds v1 events.
    spend_v1: bool = False
    # Written as an engine from before AgentCallFailed v4 wrote it: failed calls kept no usage.
    failed_v3: bool = False

    @property
    def run_id(self) -> str:
        return f"fixture-{self.name}"

    @property
    def path(self) -> Path:
        return HERE / f"{self.name}.jsonl"


@dataclass
class _Effect:
    request: Any
    scope: str
    due: float
    order: int


class _Log:
    """The log as the store would hold it: seq, scope, causation; sealed at the end."""

    def __init__(self, run_id: str, *, failed_v3: bool = False) -> None:
        self.run_id = run_id
        self.records: list[dict[str, Any]] = []
        self.failed_v3 = failed_v3

    def append(self, batch: list[NewEvent], elapsed_s: float) -> int:
        """Append one transaction; returns the seq of its first event."""
        first = len(self.records) + 1
        stamp = (CLOCK_START + timedelta(seconds=elapsed_s)).isoformat()
        for item in batch:
            ev = item.event
            version, payload = ev.version, ev.payload()
            if isinstance(ev, AgentSpendRecorded) and not ev.in_budget:  # only ever an old engine's v1 event
                version, payload = 1, {k: v for k, v in payload.items() if k != "in_budget"}
            if isinstance(ev, AgentCallFailed) and self.failed_v3:
                version, payload = 3, {k: v for k, v in payload.items() if k != "usage"}
            self.records.append({"run_id": self.run_id, "seq": len(self.records) + 1, "type": ev.type_name,
                                 "version": version, "scope": item.scope, "causation_seq": item.causation_seq,
                                 "recorded_at": stamp, "payload": payload})
        return first

    def sealed(self) -> list[Envelope]:
        return reseal(self.records)


def drive(spec: BuiltFixture) -> list[Envelope]:
    """Run the fixture's strategy in its world; the sealed log."""
    start, world = spec.make()
    main = load_strategy(spec.strategy)
    log = _Log(spec.run_id, failed_v3=spec.failed_v3)
    runtime = Runtime(main)
    pending: dict[str, _Effect] = {}
    contents: dict[str, str] = {}
    now = 0.0
    requested = 0
    ended = False

    def take(decisions: list[NewEvent], cause: int) -> list[NewEvent]:
        """Note what the decisions ask for; the spend of the agent calls they cancel (the
        executor reports it once the call has stopped, right after the batch)."""
        nonlocal requested, ended
        spent: list[NewEvent] = []
        for d in decisions:
            ev = d.event
            if isinstance(ev, (AgentCallRequested, EvaluationRequested, TimerRequested)):
                requested += 1
                pending[ev.effect_id] = _Effect(ev, d.scope, _due(ev, now, world), requested)
            elif isinstance(ev, EffectCancelled):
                gone = pending.pop(ev.effect_id, None)
                if gone is not None and isinstance(gone.request, AgentCallRequested):
                    spent.append(NewEvent(event=_cancelled_spend(gone.request, world), scope=gone.scope))
            elif isinstance(ev, SolutionRecorded):
                contents.setdefault(ev.solution_id, ev.content)
            elif isinstance(ev, (RunCompleted, RunFailed)):
                ended = True
        return [NewEvent(event=d.event, scope=d.scope, causation_seq=cause) for d in decisions] + spent

    def record(items: list[NewEvent]) -> None:
        """Bookkeeping, one event at a time (``Driver.record``); spend goes to the handlers' meter."""
        for item in items:
            if isinstance(item.event, AgentSpendRecorded) and spec.spend_v1:
                item = NewEvent(event=item.event.model_copy(update={"in_budget": False}), scope=item.scope)
            log.append([item], now)
            if isinstance(item.event, AgentSpendRecorded):
                assert runtime.feed(item.event) == []

    def session(resumed: bool, lost: list[_Effect]) -> None:
        nonlocal runtime
        log.append([NewEvent(event=DriverStarted(pid=1, host="sim", resumed=resumed, elapsed_s=now),
                             scope="driver")], now)
        if resumed:  # the driver rebuilds the handlers from the log, checking every decision
            divergence, rebuilt = verify(log.sealed(), lambda: Runtime(main))
            assert divergence is None, divergence.describe()
            assert isinstance(rebuilt, Runtime)
            runtime = rebuilt
        record([NewEvent(event=AgentSpendRecorded(reason="crashed", effect_id=e.request.effect_id, backend=BACKEND,
                                                  detail="the engine stopped during this call; it is run again"),
                         scope=e.scope) for e in lost])
        if world.preflight_usd:
            record([NewEvent(event=AgentSpendRecorded(reason="preflight", backend=BACKEND, cost_usd=world.preflight_usd,
                                                      detail="start-up check of the model API"), scope="driver")])
        for eff in pending.values():  # what was in flight runs again from the start
            eff.due = _due(eff.request, now, world)

    decisions = runtime.feed(start)
    log.append([NewEvent(event=start, scope="run"), *take(decisions, 1),
                *[NewEvent(event=e, scope="run", causation_seq=1) for e in world.at_creation]], now)
    session(False, [])
    results = 0
    interrupted: set[str] = set()
    while not ended:
        if not pending:
            raise RuntimeError(f"{spec.name}: the handlers wait for nothing but the run has not ended")
        eff = min(pending.values(), key=lambda e: (e.due, e.order))
        del pending[eff.request.effect_id]
        now = max(now, eff.due)
        result = _answer(eff.request, now, world, contents)
        cause = len(log.records) + 1
        batch = take(runtime.feed(result), cause)
        caused = [item for item in batch if item.causation_seq == cause]
        log.append([NewEvent(event=result, scope=eff.scope), *caused], now)
        record([item for item in batch if item.causation_seq != cause])
        results += 1
        if ended:
            break
        calls = sorted((e for e in pending.values() if isinstance(e.request, AgentCallRequested)),
                       key=lambda e: e.order)
        if calls and "stop" not in interrupted and results >= (world.stop_after or math.inf):
            interrupted.add("stop")
            record([NewEvent(event=_cancelled_spend(e.request, world), scope=e.scope) for e in calls])
            now += STOP_SECONDS
            log.append([NewEvent(event=DriverStopped(reason="signal SIGTERM", elapsed_s=now,
                                                     cancelled_effects=sorted(pending)), scope="driver")], now)
            session(True, [])
        elif calls and "crash" not in interrupted and results >= (world.crash_after or math.inf):
            interrupted.add("crash")
            session(True, calls)
    envelopes = log.sealed()
    divergence, _ = verify(envelopes, lambda: Runtime(main))
    if divergence is not None:
        raise RuntimeError(f"{spec.name} does not replay:\n{divergence.describe()}")
    return envelopes


def _due(request: Any, now: float, world: World) -> float:
    if isinstance(request, TimerRequested):
        return max(now, request.at_elapsed_s)
    return now + world.seconds(request)


def _cancelled_spend(request: AgentCallRequested, world: World) -> AgentSpendRecorded:
    return AgentSpendRecorded(reason="cancelled", effect_id=request.effect_id, backend=BACKEND,
                              cost_usd=world.cancelled_usd(request), detail="the engine cancelled this call")


def _answer(request: Any, now: float, world: World, contents: dict[str, str]) -> Event:
    if isinstance(request, AgentCallRequested):
        answer = world.agent(request)
        if isinstance(answer, str):
            answer = AgentCallCompleted(effect_id=request.effect_id, text=answer)
        return answer.model_copy(update={"effect_id": request.effect_id, "elapsed_s": now})
    if isinstance(request, EvaluationRequested):
        out = world.evaluate(request, contents[request.solution_id])
        if isinstance(out, EvaluationResult):
            out = EvaluationCompleted(effect_id=request.effect_id, result=out)
        return out.model_copy(update={"effect_id": request.effect_id, "elapsed_s": now})
    return TimerFired(effect_id=request.effect_id, elapsed_s=now)


# --- the worlds ---------------------------------------------------------------------------------


def _started(strategy: str, config: PipelineConfig, task: TaskDescription, *, seed: int = 0,
             params: dict[str, Any] | None = None) -> RunStarted:
    return RunStarted(strategy=strategy, backend=BACKEND, seed=seed, config=config.model_dump(mode="json"),
                      task=task, task_dir="/nonexistent/task", run_dir="/nonexistent/run", params=params or {},
                      patches=adopted_by_new_runs())


def _small_mle_star(**settings: Any) -> PipelineConfig:
    base: dict[str, Any] = dict(num_retrieved_models=2, outer_loop_steps=1, inner_loop_steps=2,
                                num_parallel_solutions=2, ensemble_rounds=2, time_limit_seconds=3600)
    return PipelineConfig(**(base | settings))


def mle_star_budget() -> tuple[RunStarted, World]:
    from tests.pipeline import scripted_agent as sa
    from tests.support.sim import make_task

    world = World(agent=lambda r: sa.answer(r, cost_usd=0.01), evaluate=sa.evaluate,
                  cancelled_usd=lambda r: 0.004, preflight_usd=0.002, crash_after=6, stop_after=14)
    return _started("mle-star", _small_mle_star(max_budget_usd=0.2), make_task()), world


def mle_star_deadlines() -> tuple[RunStarted, World]:
    from tests.pipeline import scripted_agent as sa
    from tests.support.sim import make_task

    def agent(r: AgentCallRequested) -> AgentCallCompleted | AgentCallFailed | str:
        if r.agent_type == "extractor" and r.session_key == "path-1":
            return "I could not find a block worth refining."       # not an ExtractorOutput
        if r.agent_type == "summarize":
            return AgentCallFailed(effect_id=r.effect_id, error="scripted summarize failure", cost_usd=0.003)
        return sa.answer(r, cost_usd=0.005)

    def seconds(r: Any) -> float:  # no coder finishes in Phase 2, no second ensemble in Phase 3
        return {"coder": 2000.0, "ensembler": 300.0}.get(getattr(r, "agent_type", ""), 1.0)

    world = World(agent=agent, evaluate=sa.evaluate, seconds=seconds, cancelled_usd=lambda r: None,
                  preflight_usd=0.002)
    return _started("mle-star", _small_mle_star(), make_task(direction="minimize", metric="rmse")), world


def mle_star_phase1_fails() -> tuple[RunStarted, World]:
    from tests.pipeline import scripted_agent as sa
    from tests.support.sim import error_result, make_task

    world = World(agent=lambda r: sa.answer(r, cost_usd=0.002), evaluate=lambda r, code: error_result(),
                  preflight_usd=0.001)
    return _started("mle-star", _small_mle_star(max_debug_attempts=1), make_task()), world


async def mle_star_with_a_path_bug(wf: Workflow) -> None:
    """MLE-STAR whose Phase 2 path 0 meets a bug at its first outer step (an exception no handler
    expects): the path fails alone and the Phase 1 solution takes its place (REQ-OR-022/040).
    The bug is an observer of the run's decisions that raises once, so the run stays pure and its
    log replays with this strategy."""
    raised: list[bool] = []

    def bug(event: Event) -> None:
        if not raised and isinstance(event, Note) and event.message == "outer step start":
            raised.append(True)
            raise RuntimeError("a bug in the path's code")

    wf.observe(bug)
    await mle_star(wf)


def mle_star_path_bug() -> tuple[RunStarted, World]:
    from tests.pipeline import scripted_agent as sa
    from tests.support.sim import make_task

    world = World(agent=lambda r: sa.answer(r, cost_usd=0.001), evaluate=sa.evaluate)
    return _started(PATH_BUG_STRATEGY, _small_mle_star(num_parallel_solutions=2, ensemble_rounds=1),
                    make_task()), world


def evolve_edges() -> tuple[RunStarted, World]:
    from tests.evolution.scripted import World as EvolutionWorld
    from tests.evolution.scripted import evaluate
    from tests.support.sim import make_task

    scripted = EvolutionWorld(draft_outcome=lambda step: {"bugs": 1} if step == 1 else {})
    config = PipelineConfig(max_steps=8, phase1_target_nodes=3, steps_per_epoch=3, workers=2, tournament_size=3,
                            contamination_check=True)
    world = World(agent=scripted, evaluate=evaluate, preflight_usd=0.001, cancelled_usd=lambda r: 0.002,
                  stop_after=9)
    return _started("evolve", config, make_task(), seed=5,
                    params={"reference_discussions": ["a public notebook: gradient boosting on every column"]}), world


def _cut_at_cap(request: AgentCallRequested, cost_usd: float) -> AgentCallFailed:
    """What the agent executor returns for a call the CLI stopped at its cap (engine.agents.ledger)."""
    return AgentCallFailed(effect_id=request.effect_id, cost_usd=cost_usd, stop="budget", error=(
        f"budget stop: this call was cut at its cap of ${cost_usd:.4f} (its share of the run's budget): "
        "budget exhausted (max_budget_usd reached)"))


class _Ledger:
    """The engine's ledger as far as a scripted world needs it: once the search's share of the
    budget is spent, a search call is refused (a budget stop of no cost); finalization's are not."""

    def __init__(self, limit_usd: float, answer: AgentAnswer) -> None:
        self.limit_usd, self.answer = limit_usd, answer
        self.spent_usd, self.calls = 0.0, 0

    def __call__(self, request: AgentCallRequested) -> AgentCallCompleted | AgentCallFailed | str:
        from handlers.money import search_budget_usd

        if (not request.effect_id.startswith("final/")
                and self.spent_usd >= search_budget_usd(self.limit_usd, self.spent_usd, self.calls)):
            return AgentCallFailed(effect_id=request.effect_id, cost_usd=0.0, stop="budget",
                                   error=f"budget stop: run budget exhausted: ${self.spent_usd:.4f} spent of "
                                         f"max_budget_usd ${self.limit_usd:g}")
        answer = self.answer(request)
        self.spent_usd += 0.0 if isinstance(answer, str) else answer.cost_usd or 0.0
        self.calls += 1
        return answer


def mle_star_budget_stop() -> tuple[RunStarted, World]:
    from tests.pipeline import scripted_agent as sa
    from tests.support.sim import make_task

    def agent(r: AgentCallRequested) -> AgentCallCompleted | AgentCallFailed | str:
        if r.effect_id == "phase1/candidate-1/init":   # the second draft, beside the first, is cut
            return _cut_at_cap(r, 0.04)
        answer = sa.answer(r, cost_usd=0.03)
        if r.agent_type != "init":
            return answer
        # The cost the API relay metered for the call (engine.agents.claude.metered): its tools'
        # own requests included, so more than the CLI reported.
        return answer.model_copy(update={"cost_usd": 0.035, "usage": {
            **answer.usage, "cost_source": "relay", "relay": {"requests": 3, "cli_cost_usd": 0.03}}})

    world = World(agent=_Ledger(0.3, agent), evaluate=sa.evaluate, cancelled_usd=lambda r: 0.004,
                  preflight_usd=0.002, stop_after=2)
    return _started("mle-star", _small_mle_star(max_budget_usd=0.3), make_task()), world


def evolve_budget_stop() -> tuple[RunStarted, World]:
    from tests.evolution.scripted import World as EvolutionWorld
    from tests.evolution.scripted import evaluate
    from tests.support.sim import make_task

    scripted = EvolutionWorld()

    def agent(r: AgentCallRequested) -> AgentCallCompleted | AgentCallFailed | str:
        if r.effect_id == "evolve/step-3/draft":    # the money runs short at the fourth draft
            return _cut_at_cap(r, 0.05)
        answer = scripted(r)
        if isinstance(answer, str):
            return AgentCallCompleted(effect_id=r.effect_id, text=answer, cost_usd=0.02)
        return answer

    config = PipelineConfig(max_steps=12, phase1_target_nodes=6, steps_per_epoch=3, workers=2, max_budget_usd=0.3)
    world = World(agent=_Ledger(0.3, agent), evaluate=evaluate, preflight_usd=0.001, cancelled_usd=lambda r: 0.002)
    return _started("evolve", config, make_task(), seed=3), world


def mle_star_held_back() -> tuple[RunStarted, World]:
    """A run that held rows back from its search (docs/final-choice-slice.md), in a world where
    every refinement overfits: the better on validation, the worse on the held-back rows."""
    from tests.pipeline import scripted_agent as sa
    from tests.support.sim import make_task

    def evaluate(request: EvaluationRequested, code: str) -> EvaluationCompleted:
        done = sa.evaluate(request, code)
        if done.result.score is None or request.purpose == "submission":
            return done
        return done.model_copy(update={"hidden_score": round(1.0 - done.result.score, 6)})

    drawn = HiddenSliceDrawn(rows=300, of_rows=3000, view_dir="/nonexistent/run/hidden-slice/public",
                             answers="/nonexistent/run/hidden-slice/answers.csv", ids_digest="0" * 64)
    world = World(agent=lambda r: sa.answer(r, cost_usd=0.002), evaluate=evaluate, at_creation=(drawn,))
    return _started("mle-star", _small_mle_star(hidden_slice=True), make_task()), world


PATH_BUG_STRATEGY = "tests.replays.build:mle_star_with_a_path_bug"  # a module:function strategy

BUILT: tuple[BuiltFixture, ...] = (
    BuiltFixture("mle-star-sim-budget", "MLE-STAR out of money: budget warning and shutdown, the start-up "
                 "check's spend, cancelled calls' spend, a crash and a stop, each resumed", "mle-star",
                 mle_star_budget),
    BuiltFixture("mle-star-sim-budget-spend-v1", "the budget run as an engine from before AgentSpendRecorded v2 "
                 "wrote it: its handlers did not count that spend, and the log still replays to their decisions",
                 "mle-star", mle_star_budget, spend_v1=True),
    BuiltFixture("mle-star-sim-deadlines", "MLE-STAR out of time (minimised metric): Phases 2 and 3 cut at "
                 "their deadlines with calls in flight (spend unknown), a failed summary, no code block",
                 "mle-star", mle_star_deadlines),
    BuiltFixture("mle-star-sim-phase1-fails", "MLE-STAR whose every script fails: the run fails in Phase 1",
                 "mle-star", mle_star_phase1_fails),
    BuiltFixture("mle-star-sim-path-bug", "MLE-STAR with a bug in one Phase 2 path: the path fails alone",
                 PATH_BUG_STRATEGY, mle_star_path_bug),
    BuiltFixture("mle-star-sim-budget-stop", "MLE-STAR with a small budget: a draft cut at its cap is a budget "
                 "stop (AgentCallFailed v3), no new phase starts, finalization runs with the best so far; the "
                 "start-up check's and a stopped driver's spend; a draft's cost as the API relay metered it",
                 "mle-star", mle_star_budget_stop),
    BuiltFixture("mle-star-sim-budget-stop-failed-v3", "the small-budget run as an engine from before "
                 "AgentCallFailed v4 wrote it: failed calls kept no usage, and the log still loads and replays",
                 "mle-star", mle_star_budget_stop, failed_v3=True),
    BuiltFixture("mle-star-sim-held-back", "MLE-STAR with rows held back from its search: every script's "
                 "held-back grade (EvaluationCompleted v6), the final chosen on them (FinalChoiceMade)", "mle-star",
                 mle_star_held_back),
    BuiltFixture("evolve-sim-budget-stop", "evolution with a small budget: a draft cut at its cap stops the "
                 "search at the cost limit (no node for it, no dead node), finalization runs", "evolve",
                 evolve_budget_stop),
    BuiltFixture("evolve-sim-edges", "evolution: a debugged draft, degenerate merges, the contamination check, "
                 "finalization falling back, a stop resumed", "evolve", evolve_edges),
)
BUILT_BY_NAME = {f.name: f for f in BUILT}


def build(spec: BuiltFixture) -> Path:
    write_jsonl(drive(spec), spec.path)
    return spec.path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.replays.build", description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="fixtures to build (default: --all)")
    parser.add_argument("--all", action="store_true")
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args(argv)
    if args.list:
        for spec in BUILT:
            print(f"{spec.name:32} {spec.about}")
        return
    unknown = [n for n in args.names if n not in BUILT_BY_NAME]
    if unknown:
        raise SystemExit(f"unknown fixture(s): {', '.join(unknown)}; see --list")
    for spec in BUILT if args.all or not args.names else [BUILT_BY_NAME[n] for n in args.names]:
        path = build(spec)
        print(f"{spec.name}: {path}")


if __name__ == "__main__":
    main()
