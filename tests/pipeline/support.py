"""Test support for the orchestrator: a simulator with a real clock, and scripted phases.

``tests/support/sim.py`` answers effects one by one and fires a timer as soon as it is picked,
which is right for handlers without deadlines. The orchestrator races every phase against a
guard timer, so here effects *take time*: each request finishes at ``request time + duration``
and the simulator always delivers the earliest finish next (ties in request order). A timer
finishes at its ``at_elapsed_s``. That is how the real driver behaves, in a few microseconds.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from events.core import (
    AgentCallCompleted,
    AgentCallRequested,
    EvaluationRequested,
    PhaseCompleted,
    PhaseStarted,
    SolutionEvaluated,
)
from events.domain import (
    EvaluationResult,
    Phase1Result,
    Phase2Result,
    Phase3Result,
    PipelineConfig,
    PipelineError,
    SolutionPhase,
    SolutionScript,
)
from handlers.deadline import UNBOUNDED, Deadline
from handlers.mlestar.pipeline import Phases, run_mle_star
from handlers.workflow import Workflow
from tests.support.sim import SimRun, ok_result, simulate_clock

Durations = Callable[[Any], float | None]


# --- scripted phases -----------------------------------------------------------------------------


@dataclass
class Script:
    """How each scripted phase behaves: seconds and dollars per unit of work, scores, failures.

    A phase does ``steps[phase]`` agent calls (each ``seconds[phase]`` long, costing
    ``cost[phase]``), then evaluates one new solution scoring ``scores[phase]``.
    """

    seconds: dict[str, float] = field(default_factory=lambda: {"phase1": 10, "phase2": 10, "phase3": 10,
                                                               "finalization": 10})
    steps: dict[str, int] = field(default_factory=lambda: {"phase1": 1, "phase2": 1, "phase3": 1,
                                                           "finalization": 1})
    cost: dict[str, float] = field(default_factory=dict)
    scores: dict[str, float | None] = field(default_factory=lambda: {"phase1": 0.5, "phase2": 0.6,
                                                                     "phase3": 0.7, "finalization": None})
    fail: set[str] = field(default_factory=set)           # phases (or "phase2/path-i") that raise
    phase1_error: str = ""                                 # run_phase1 raises PipelineError(...)
    seen: dict[str, Any] = field(default_factory=dict)    # what each phase was called with

    def agent(self, req: AgentCallRequested) -> AgentCallCompleted:
        phase = req.effect_id.split("/")[0]
        return AgentCallCompleted(effect_id=req.effect_id, text="ok", cost_usd=self.cost.get(phase, 0.0))

    def evaluate(self, req: EvaluationRequested, code: str) -> EvaluationResult:
        score = float(code.rsplit("score=", 1)[1]) if "score=" in code else None
        return ok_result(score)

    def duration(self, req: Any) -> float | None:
        if isinstance(req, AgentCallRequested):
            return self.seconds.get(req.effect_id.split("/")[0])
        return 0.0

    def phases(self) -> Phases:
        return Phases(self.phase1, self.phase2, self.phase3, self.finalization)

    def main(self) -> Callable:
        return functools.partial(run_mle_star, phases=self.phases())

    def run(self, config: PipelineConfig, **kw: Any) -> SimRun:
        return simulate_clock(self.main(), agent=self.agent, evaluate=self.evaluate, config=config,
                              durations=self.duration, **kw)

    async def _work(self, wf: Workflow, phase: str, scope: str, tag: str) -> tuple[SolutionScript, float | None]:
        w = wf.at(scope)
        for k in range(self.steps.get(phase, 1)):
            await w.agent(AgentCallRequested(effect_id=w.effect_id(f"work-{k}"), agent_type="coder",
                                             prompt=f"{scope} {k}"))
        if scope in self.fail or phase in self.fail:
            raise RuntimeError(f"{scope} broke")
        score = self.scores.get(phase)
        code = f"# {scope} {tag}\nprint('x')\n" + ("" if score is None else f"# score={score}\n")
        sid = w.record_solution(code, phase=SolutionPhase.refined, origin=phase)
        done = await w.evaluate(sid, name="eval", purpose=phase, timeout_s=30)
        w.record(SolutionEvaluated(solution_id=sid, requested_solution_id=sid, score=done.result.score,
                                   is_executable=not done.result.is_error, purpose=phase))
        return SolutionScript(content=code, phase=SolutionPhase.refined, score=done.result.score), done.result.score

    async def phase1(self, wf: Workflow, *, window: Deadline = UNBOUNDED) -> Phase1Result:
        self.seen["phase1"] = {"deadline": wf.deadline, "window": window, "now": wf.now}
        wf.at("phase1").record(PhaseStarted(phase="phase1"))
        if self.phase1_error:
            await wf.at("phase1").agent(AgentCallRequested(effect_id=wf.at("phase1").effect_id("retriever"),
                                                           agent_type="retriever", prompt="x"))
            raise PipelineError(self.phase1_error, {"candidate_errors": ["boom"]})
        solution, score = await self._work(wf, "phase1", "phase1", "s0")
        wf.at("phase1").record(PhaseCompleted(phase="phase1"))
        return Phase1Result(retrieved_models=[], candidate_solutions=[solution], candidate_scores=[score],
                            initial_solution=solution, initial_score=score)  # type: ignore[arg-type]

    async def phase2(self, wf: Workflow, s0: SolutionScript, h0: float, *,
                     sink: Any = None, unmerged: Any = ()) -> list[Phase2Result]:
        self.seen["phase2"] = {"deadline": wf.deadline, "now": wf.now, "s0": s0, "h0": h0}

        async def path(i: int) -> Phase2Result | None:
            try:
                best, score = await self._work(wf, "phase2", f"phase2/path-{i}", f"p{i}")
            except RuntimeError:
                return None  # an isolated failure: the orchestrator substitutes s_0
            return Phase2Result(ablation_summaries=[], refined_blocks=[], best_solution=best,
                                best_score=score, step_history=[])  # type: ignore[arg-type]

        return await wf.gather(*(path(i) for i in range(wf.config.num_parallel_solutions)))

    async def phase3(self, wf: Workflow, solutions: list[SolutionScript], *,
                     sink: Any = None) -> Phase3Result:
        self.seen["phase3"] = {"deadline": wf.deadline, "now": wf.now, "solutions": solutions}
        wf.at("phase3").record(PhaseStarted(phase="phase3"))
        best, score = await self._work(wf, "phase3", "phase3", "ens")
        wf.at("phase3").record(PhaseCompleted(phase="phase3"))
        return Phase3Result(input_solutions=solutions, ensemble_plans=["avg"], ensemble_scores=[score],
                            best_ensemble=best, best_ensemble_score=score)  # type: ignore[arg-type]

    async def finalization(self, wf: Workflow, solution: SolutionScript, score: float, *,
                           fallback: SolutionScript, validation_submission: Any = None) -> Any:
        self.seen["finalization"] = {"deadline": wf.deadline, "now": wf.now, "solution": solution,
                                     "score": score, "validation_submission": validation_submission}
        w = wf.at("finalization")
        w.record(PhaseStarted(phase="final"))
        for k in range(self.steps.get("finalization", 1)):
            await w.agent(AgentCallRequested(effect_id=w.effect_id(f"work-{k}"), agent_type="test", prompt="t"))
        if "finalization" in self.fail:
            raise RuntimeError("finalization broke")
        w.record(PhaseCompleted(phase="final"))
        return _Finalized(final_solution=solution.model_copy(update={"phase": SolutionPhase.final}),
                          submission_path="/runs/x/final/submission.csv")


@dataclass
class _Finalized:
    final_solution: SolutionScript
    submission_path: str
    fallback_reason: str = ""
