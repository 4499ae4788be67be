"""Drive a strategy's workflow in memory, answering its effects with test functions.

No engine, no store, no subprocess: the pure handlers alone, fed results in FIFO order or in
a seeded random order (to prove decisions do not depend on how effects interleave). This is
the test double at the true boundary for handler tests: agents and evaluations answer from
scripts; everything else is the real code.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from events.base import Event, NewEvent
from events.core import (
    AgentCallCompleted,
    AgentCallFailed,
    AgentCallRequested,
    EffectCancelled,
    EvaluationCompleted,
    EvaluationRequested,
    RunCompleted,
    RunFailed,
    RunStarted,
    SolutionRecorded,
    TimerFired,
    TimerRequested,
)
from events.domain import DataModality, EvaluationResult, MetricDirection, PipelineConfig, TaskDescription, TaskType
from handlers.patches import adopted_by_new_runs
from handlers.runtime import Runtime

AgentFn = Callable[[AgentCallRequested], AgentCallCompleted | AgentCallFailed | str]
EvalFn = Callable[[EvaluationRequested, str], EvaluationResult | EvaluationCompleted]


def make_task(direction: str = "maximize", metric: str = "accuracy") -> TaskDescription:
    return TaskDescription(competition_id="sim-task", task_type=TaskType.classification,
                           data_modality=DataModality.tabular, evaluation_metric=metric,
                           metric_direction=MetricDirection(direction), description="Predict the label.")


def ok_result(score: float | None, stdout: str = "") -> EvaluationResult:
    out = stdout or ("" if score is None else f"Final Validation Performance: {score}\n")
    return EvaluationResult(score=score, stdout=out, stderr="", exit_code=0, duration_seconds=0.1, is_error=False)


def error_result(traceback: str = "Traceback (most recent call last):\n  File \"x.py\"\nValueError: boom") -> EvaluationResult:
    return EvaluationResult(score=None, stdout="", stderr=traceback, exit_code=1, duration_seconds=0.1,
                            is_error=True, error_traceback=traceback)


@dataclass
class SimRun:
    events: list[tuple[str, Event]] = field(default_factory=list)  # (scope, event) inputs and decisions
    solutions: dict[str, str] = field(default_factory=dict)
    completed: RunCompleted | None = None
    failed: RunFailed | None = None

    def of(self, cls: type) -> list[Any]:
        return [e for _, e in self.events if isinstance(e, cls)]

    def agent_requests(self, agent_type: str | None = None) -> list[AgentCallRequested]:
        return [e for e in self.of(AgentCallRequested) if agent_type is None or e.agent_type == agent_type]

    def decisions(self) -> list[tuple[str, dict[str, Any]]]:
        return [(e.type_name, e.payload()) for _, e in self.events if e.kind in ("decision", "remark")]


def simulate(main: Callable, *, agent: AgentFn, evaluate: EvalFn, config: PipelineConfig | None = None,
             task: TaskDescription | None = None, seed: int = 0, order_seed: int | None = None,
             seconds_per_result: float = 1.0, max_steps: int = 100_000,
             params: dict[str, Any] | None = None, start: RunStarted | None = None,
             timers_last: bool = False, preamble: Sequence[Event] = ()) -> SimRun:
    """Answer effects one at a time: FIFO, or a seeded random pick (``order_seed``); each result
    advances the clock by ``seconds_per_result`` and a picked timer fires at once.
    ``start``: a whole recorded RunStarted to begin with (config/task/seed/params then unused).
    ``timers_last``: a timer is picked only when nothing else is pending (a long time limit, as in
    a real run), so a random order permutes agent and evaluation results without hitting deadlines.
    ``preamble``: inputs that arrive right after the start, before any effect's result (e.g. a
    recorded run's start-up check spend, ``AgentSpendRecorded``)."""
    rng = random.Random(order_seed)

    def pick(pending: list[_Pending], now: float) -> tuple[_Pending, float]:
        choices = [i for i, p in enumerate(pending) if not isinstance(p.request, TimerRequested)] if timers_last else []
        choices = choices or list(range(len(pending)))
        item = pending.pop(choices[0] if order_seed is None else choices[rng.randrange(len(choices))])
        at = item.request.at_elapsed_s if isinstance(item.request, TimerRequested) else 0.0
        return item, max(now + seconds_per_result, at)

    return _run(main, pick, agent=agent, evaluate=evaluate, config=config, task=task, seed=seed,
                max_steps=max_steps, params=params, start=start, preamble=preamble)


def simulate_clock(main: Callable, *, agent: AgentFn, evaluate: EvalFn, config: PipelineConfig | None = None,
                   task: TaskDescription | None = None, seed: int = 0,
                   durations: Callable[[Any], float | None] | None = None, default_s: float = 1.0,
                   max_steps: int = 100_000, params: dict[str, Any] | None = None,
                   patches: list[str] | None = None) -> SimRun:
    """Effects *take time*, as with the real driver: each finishes at request time + its
    duration (``durations(request)`` or ``default_s``), a timer at its ``at_elapsed_s``; the
    earliest finish is delivered next (ties in request order). For code that races deadlines."""

    def pick(pending: list[_Pending], now: float) -> tuple[_Pending, float]:
        pending.sort(key=lambda p: (p.due, p.order))
        item = pending.pop(0)
        return item, max(now, item.due)

    def due(request: Any, now: float) -> float:
        if isinstance(request, TimerRequested):
            return max(now, request.at_elapsed_s)
        took = durations(request) if durations is not None else None
        return now + (default_s if took is None else took)

    return _run(main, pick, agent=agent, evaluate=evaluate, config=config, task=task, seed=seed,
                max_steps=max_steps, params=params, due=due, patches=patches)


@dataclass
class _Pending:
    request: Any
    due: float
    order: int


def _run(main: Callable, pick: Callable, *, agent: AgentFn, evaluate: EvalFn, config: PipelineConfig | None,
         task: TaskDescription | None, seed: int, max_steps: int, params: dict[str, Any] | None,
         due: Callable[[Any, float], float] | None = None, start: RunStarted | None = None,
         preamble: Sequence[Event] = (), patches: list[str] | None = None) -> SimRun:
    rt = Runtime(main)
    run = SimRun()
    if start is None:
        start = RunStarted(strategy="sim", backend="sim", seed=seed,
                           config=(config or PipelineConfig()).model_dump(mode="json"), task=task or make_task(),
                           task_dir="/nonexistent", run_dir="/nonexistent", params=params or {},
                           patches=adopted_by_new_runs() if patches is None else patches)  # as `engine start` does
    pending: list[_Pending] = []
    now = 0.0
    counter = 0

    def take(decisions: list[NewEvent]) -> None:
        nonlocal counter
        for d in decisions:
            ev = d.event
            run.events.append((d.scope, ev))
            if isinstance(ev, (AgentCallRequested, EvaluationRequested, TimerRequested)):
                counter += 1
                pending.append(_Pending(ev, due(ev, now) if due else 0.0, counter))
            elif isinstance(ev, EffectCancelled):
                pending[:] = [p for p in pending if p.request.effect_id != ev.effect_id]
            elif isinstance(ev, SolutionRecorded):
                run.solutions[ev.solution_id] = ev.content
            elif isinstance(ev, RunCompleted):
                run.completed = ev
            elif isinstance(ev, RunFailed):
                run.failed = ev

    run.events.append(("run", start))
    take(rt.feed(start))
    for event in preamble:
        run.events.append(("input", event))
        take(rt.feed(event))
    steps = 0
    while pending and run.completed is None and run.failed is None:
        steps += 1
        if steps > max_steps:
            raise RuntimeError("simulation did not finish")
        item, now = pick(pending, now)
        result = _answer(item.request, now, agent, evaluate, run)
        run.events.append(("input", result))
        take(rt.feed(result))
    return run


def _answer(req: Any, now: float, agent: AgentFn, evaluate: EvalFn, run: SimRun) -> Event:
    if isinstance(req, AgentCallRequested):
        answer = agent(req)
        if isinstance(answer, str):
            answer = AgentCallCompleted(effect_id=req.effect_id, text=answer)
        return answer.model_copy(update={"effect_id": req.effect_id, "elapsed_s": now})
    if isinstance(req, EvaluationRequested):
        out = evaluate(req, run.solutions[req.solution_id])
        if isinstance(out, EvaluationResult):
            out = EvaluationCompleted(effect_id=req.effect_id, result=out)
        return out.model_copy(update={"effect_id": req.effect_id, "elapsed_s": now})
    return TimerFired(effect_id=req.effect_id, elapsed_s=now)
