"""PipelineState: the fold of a run's events (REQ-OR-050 and what the engine and CLI need).

The fold reads each envelope's payload in its type's current shape (``Envelope.current_payload``:
an old version goes through the same upcasters that loading it would), so it never needs to know
which version recorded what. It does not validate each payload with pydantic: it runs on every
resume and every ``engine status``, so it must stay cheap for 100,000-event logs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from events.base import Envelope
from events.context import RunContext
from events.core import RunStarted
from events.score import Score, usable
from events.spend import AgentSpendRecorded
from events.values import TaskDescription
from replay.best import BestEvaluated
from replay.meter import AGENT_RESULTS, SpendMeter

REQUEST_TYPES = frozenset({"AgentCallRequested", "EvaluationRequested", "TimerRequested"})
RESULT_TYPES = frozenset({"AgentCallCompleted", "AgentCallFailed", "EvaluationCompleted", "TimerFired"})


@dataclass
class PendingEffect:
    effect_id: str
    seq: int
    type: str
    scope: str
    payload: dict[str, Any]


@dataclass
class SolutionNode:
    solution_id: str
    phase: str
    origin: str
    parents: list[str]
    source_model: str | None
    scope: str
    seq: int
    detail: dict[str, Any]
    content: str
    score: float | None = None


@dataclass
class EvaluationPoint:
    seq: int
    scope: str
    effect_id: str
    purpose: str
    solution_id: str
    elapsed_s: float
    score: float | None
    is_error: bool


@dataclass
class PipelineState:
    run_id: str = ""
    status: str = "new"  # new | running | completed | failed | stopped
    strategy: str = ""
    backend: str = ""
    seed: int = 0
    config: dict[str, Any] = field(default_factory=dict)
    task: dict[str, Any] = field(default_factory=dict)
    task_dir: str = ""
    run_dir: str = ""
    deterministic_order: bool = True
    params: dict[str, Any] = field(default_factory=dict)
    current_phase: str = ""
    elapsed_seconds: float = 0.0
    spend: SpendMeter = field(default_factory=SpendMeter)      # the handlers' runtime counts the same way
    phase2_path_statuses: dict[str, str] = field(default_factory=dict)
    phase_status: dict[str, str] = field(default_factory=dict)
    best: BestEvaluated = field(default_factory=BestEvaluated)  # the best ever evaluated (replay.best)
    final_score: float | None = None   # the submitted solution's validation score (RunCompleted)
    evaluation_count: int = 0
    events: int = 0
    last_seq: int = 0
    last_hash: str = ""
    pending: dict[str, PendingEffect] = field(default_factory=dict)
    requests: dict[str, PendingEffect] = field(default_factory=dict)
    results: set[str] = field(default_factory=set)
    solutions: dict[str, SolutionNode] = field(default_factory=dict)
    evaluations: list[EvaluationPoint] = field(default_factory=list)
    submission_path: str = ""
    error: str = ""
    result: dict[str, Any] = field(default_factory=dict)
    driver_sessions: int = 0
    notes: list[dict[str, Any]] = field(default_factory=list)
    agent_selection: dict[str, str] = field(default_factory=dict)  # AgentSelected: requested, chosen, reason
    _context: RunContext | None = field(default=None, repr=False, compare=False)

    def context(self) -> RunContext:
        """The run's settings, validated once (the executors read them on every effect)."""
        if self._context is None:
            if self.status == "new":
                raise ValueError("the run has not started: no RunStarted folded yet")
            self._context = RunContext.of(RunStarted(
                strategy=self.strategy, backend=self.backend, seed=self.seed, config=self.config,
                task=TaskDescription.model_validate(self.task), task_dir=self.task_dir, run_dir=self.run_dir,
                deterministic_order=self.deterministic_order, params=self.params), run_id=self.run_id)
        return self._context

    @property
    def maximize(self) -> bool:
        return self.task.get("metric_direction", "maximize") == "maximize"

    @property
    def score_rule(self) -> Score:
        return Score.of(self.task.get("metric_direction", "maximize"))

    @property
    def accumulated_cost_usd(self) -> float:
        return self.spend.usd

    @property
    def budget_cost_usd(self) -> float:
        """What the handlers' budget decisions count: all of it, but for spend an old log
        recorded beside handlers that did not count it (``replay.meter``)."""
        return self.spend.budget_usd

    @property
    def cost_by_scope(self) -> dict[str, float]:
        return self.spend.usd_by_scope()

    @property
    def unknown_cost_calls(self) -> int:
        """Calls (and spend of cancelled or lost calls) whose cost the backend could not tell."""
        return self.spend.unknown

    @property
    def agent_call_count(self) -> int:
        return self.spend.calls

    @property
    def best_score_so_far(self) -> float | None:
        return self.best.score

    @property
    def best_score(self) -> float | None:
        """The score a run is shown with (``engine status``, the report, a campaign's table): once
        it completed, its final solution's validation score — what the strategy chose and
        submitted, recorded in ``RunCompleted.best_score`` (docs/decisions/0001-final-choice.md); before that, or
        when the final carries no score, the best evaluated so far."""
        return self.final_score if self.final_score is not None else self.best_score_so_far

    @property
    def best_solution_id(self) -> str | None:
        return self.best.solution_id

    @property
    def finished(self) -> bool:
        return self.status in ("completed", "failed")

    def apply(self, env: Envelope) -> None:
        """Fold one envelope into the state (in seq order)."""
        p = env.current_payload()
        t = env.type
        self.events += 1
        self.last_seq = env.seq
        self.last_hash = env.hash
        handler = _APPLY.get(t)
        if handler is not None:
            handler(self, env, p)
        elapsed = p.get("elapsed_s")
        if isinstance(elapsed, (int, float)) and elapsed > self.elapsed_seconds:
            self.elapsed_seconds = float(elapsed)

    def cost_breakdown(self) -> dict[str, Any]:
        return cost_breakdown_of(self.cost_by_scope, self.unknown_cost_calls, self.spend)

    def summary(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "status": self.status,
            "strategy": self.strategy,
            "backend": self.backend,
            "agent_selection": dict(self.agent_selection),
            "task": self.task.get("competition_id", ""),
            "current_phase": self.current_phase,
            "best_score": self.best_score,
            "elapsed_seconds": round(self.elapsed_seconds, 3),
            "cost_usd": round(self.accumulated_cost_usd, 6),
            "cost_by_scope": {k: round(v, 6) for k, v in self.cost_by_scope.items()},
            "cost_breakdown": self.cost_breakdown(),
            "agent_calls": self.agent_call_count,
            "evaluations": self.evaluation_count,
            "events": self.events,
            "pending_effects": list(self.pending),
            "phase2_path_statuses": dict(self.phase2_path_statuses),
            "submission_path": self.submission_path,
            "error": self.error,
        }


def _phase_of(scope: str) -> str:
    head = scope.split("/", 1)[0]
    return {"phase1": "phase1", "phase2": "phase2", "phase3": "phase3", "final": "finalization"}.get(head, "other")


def cost_breakdown_of(cost_by_scope: dict[str, float], unknown_cost_calls: int = 0,
                      spend: SpendMeter | None = None) -> dict[str, Any]:
    """REQ-OR-037: spend per phase, per Phase 2 path, and in total (scopes name the phase)."""
    phases = {"phase1": 0.0, "phase2": 0.0, "phase3": 0.0, "finalization": 0.0, "other": 0.0}
    per_path: dict[str, float] = {}
    for scope, cost in sorted(cost_by_scope.items()):
        phases[_phase_of(scope)] += cost
        parts = scope.split("/")
        if parts[0] == "phase2" and len(parts) > 1 and parts[1].startswith("path-"):
            per_path[parts[1]] = per_path.get(parts[1], 0.0) + cost
    breakdown: dict[str, Any] = {f"{name}_cost_usd": round(v, 6) for name, v in phases.items()}
    breakdown["phase2_per_path_cost_usd"] = {k: round(v, 6) for k, v in per_path.items()}
    breakdown["total_cost_usd"] = round(sum(phases.values()), 6)
    breakdown["calls_with_unknown_cost"] = unknown_cost_calls
    if spend is not None:  # calls of a model without a price: priced by the CLI's figure, or at their cap
        breakdown["calls_priced_by_cli_cost"] = spend.priced_by_cli
        breakdown["calls_charged_at_cap"] = spend.charged_at_cap
    return breakdown


def fold(envelopes: Iterable[Envelope], state: PipelineState | None = None) -> PipelineState:
    state = state or PipelineState()
    for env in envelopes:
        state.apply(env)
    return state


# --- per-type folds ---------------------------------------------------------------------------


def _run_started(s: PipelineState, env: Envelope, p: dict[str, Any]) -> None:
    s.run_id = env.run_id
    s.status = "running"
    s.strategy = p["strategy"]
    s.backend = p["backend"]
    s.seed = p["seed"]
    s.config = p["config"]
    s.task = p["task"]
    s.task_dir = p["task_dir"]
    s.run_dir = p["run_dir"]
    s.deterministic_order = p.get("deterministic_order", True)
    s.params = dict(p.get("params") or {})


def _request(s: PipelineState, env: Envelope, p: dict[str, Any]) -> None:
    eff = PendingEffect(p["effect_id"], env.seq, env.type, env.scope, p)
    s.pending[eff.effect_id] = eff
    s.requests[eff.effect_id] = eff


def _result(s: PipelineState, env: Envelope, p: dict[str, Any]) -> None:
    effect_id = p["effect_id"]
    s.pending.pop(effect_id, None)
    s.results.add(effect_id)
    if env.type in AGENT_RESULTS:
        s.spend.count(env.type, p.get("cost_usd"), env.scope, usage=p.get("usage"))
    elif env.type == "EvaluationCompleted":
        s.evaluation_count += 1
        req = s.requests.get(effect_id)
        result = p["result"]
        s.evaluations.append(EvaluationPoint(
            seq=env.seq, scope=env.scope, effect_id=effect_id,
            purpose=req.payload.get("purpose", "") if req else "",
            solution_id=req.payload.get("solution_id", "") if req else "",
            elapsed_s=p.get("elapsed_s", 0.0), score=result.get("score"), is_error=result.get("is_error", False),
        ))


def _spend(s: PipelineState, env: Envelope, p: dict[str, Any]) -> None:
    """Spend without a recorded result (events/spend.py); unknown amounts are counted apart. Spend
    recorded beside handlers that did not count it (v1, upcast to ``in_budget=False``) is shown but
    kept out of the budget figure."""
    s.spend.count(env.type, p.get("cost_usd"), env.scope, in_budget=p.get("in_budget", True))


def _cancelled(s: PipelineState, env: Envelope, p: dict[str, Any]) -> None:
    s.pending.pop(p["effect_id"], None)


def _solution(s: PipelineState, env: Envelope, p: dict[str, Any]) -> None:
    known = s.solutions.get(p["solution_id"])
    if known is not None:
        # The same script recorded again in another scope: its first record says where it came
        # from; a later one can only add parents (e.g. two paths that wrote identical code).
        known.parents.extend(x for x in p.get("parents", []) if x not in known.parents and x != known.solution_id)
        return
    s.solutions[p["solution_id"]] = SolutionNode(
        solution_id=p["solution_id"], phase=p["phase"], origin=p["origin"], parents=list(p.get("parents", [])),
        source_model=p.get("source_model"), scope=env.scope, seq=env.seq, detail=p.get("detail", {}),
        content=p["content"],
    )


def _evaluated(s: PipelineState, env: Envelope, p: dict[str, Any]) -> None:
    score = p.get("score")
    node = s.solutions.get(p["solution_id"])
    if node is not None and score is not None:
        node.score = score
    s.best.offer(s.score_rule, solution_id=p["solution_id"], score=score, is_executable=p["is_executable"],
                 purpose=p.get("purpose", ""), scored_rows=p.get("scored_rows"))


def _phase_started(s: PipelineState, env: Envelope, p: dict[str, Any]) -> None:
    phase = p["phase"]
    s.phase_status[phase] = "running"
    if phase.startswith("phase2/"):
        s.phase2_path_statuses[phase.split("/", 1)[1]] = "running"
    else:
        s.current_phase = phase


def _phase_completed(s: PipelineState, env: Envelope, p: dict[str, Any]) -> None:
    phase = p["phase"]
    failed = bool((p.get("result") or {}).get("failed"))
    s.phase_status[phase] = "failed" if failed else "completed"
    if phase.startswith("phase2/"):
        s.phase2_path_statuses[phase.split("/", 1)[1]] = "failed" if failed else "completed"


def _run_completed(s: PipelineState, env: Envelope, p: dict[str, Any]) -> None:
    s.status = "completed"
    s.submission_path = p.get("submission_path", "")
    score = p.get("best_score")
    s.final_score = float(score) if isinstance(score, (int, float)) and usable(float(score)) else None
    s.result = p.get("result", {})
    s.pending.clear()


def _run_failed(s: PipelineState, env: Envelope, p: dict[str, Any]) -> None:
    s.status = "failed"
    s.error = p.get("error", "")
    s.pending.clear()


def _driver_started(s: PipelineState, env: Envelope, p: dict[str, Any]) -> None:
    s.driver_sessions += 1
    if not s.finished:
        s.status = "running"


def _driver_stopped(s: PipelineState, env: Envelope, p: dict[str, Any]) -> None:
    if not s.finished:
        s.status = "stopped"


def _note(s: PipelineState, env: Envelope, p: dict[str, Any]) -> None:
    s.notes.append({"seq": env.seq, "scope": env.scope, "level": p.get("level"), "message": p.get("message")})


def _agent_selected(s: PipelineState, env: Envelope, p: dict[str, Any]) -> None:
    s.agent_selection = {"requested": p["requested"], "chosen": p["chosen"], "reason": p["reason"]}


_APPLY = {
    "RunStarted": _run_started,
    "AgentSelected": _agent_selected,
    "SolutionRecorded": _solution,
    "SolutionEvaluated": _evaluated,
    "EffectCancelled": _cancelled,
    "PhaseStarted": _phase_started,
    "PhaseCompleted": _phase_completed,
    "RunCompleted": _run_completed,
    "RunFailed": _run_failed,
    "DriverStarted": _driver_started,
    AgentSpendRecorded.type_name: _spend,
    "DriverStopped": _driver_stopped,
    "Note": _note,
    **dict.fromkeys(sorted(REQUEST_TYPES), _request),
    **dict.fromkeys(sorted(RESULT_TYPES), _result),
}
