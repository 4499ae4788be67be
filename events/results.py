"""What the phases and the library's pipeline return (spec 01): each phase's result and the
run's ``FinalResult``."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from events.agent_outputs import RetrievedModel
from events.config import PipelineConfig
from events.values import CodeBlock, SolutionScript, TaskDescription

_FROZEN = ConfigDict(frozen=True)


class RefinementAttempt(BaseModel):
    model_config = _FROZEN

    plan: str
    score: float | None
    code_block: str
    was_improvement: bool


class EnsembleAttempt(BaseModel):
    model_config = _FROZEN

    plan: str
    score: float | None
    solution: SolutionScript
    scored_rows: int | None = None  # the validation rows ``score`` is on when fewer than all


class InnerLoopResult(BaseModel):
    model_config = _FROZEN

    best_solution: SolutionScript
    best_score: float
    attempts: list[RefinementAttempt]
    improved: bool


class Phase1Result(BaseModel):
    model_config = _FROZEN

    retrieved_models: list[RetrievedModel]
    candidate_solutions: list[SolutionScript]
    candidate_scores: list[float | None]
    initial_solution: SolutionScript
    initial_score: float
    # The scored candidates no merge reached because Phase 1's time ran out, best first: Phase 2's
    # other paths start from them, so Phase 3 still blends different models. Left out of the
    # run's result: the candidates are there already, and the Notes of Phase 2 say which started.
    unmerged: list[SolutionScript] = Field(default_factory=list, exclude=True)


class Phase2Result(BaseModel):
    model_config = _FROZEN

    ablation_summaries: list[str]
    refined_blocks: list[CodeBlock]
    best_solution: SolutionScript
    best_score: float
    step_history: list[dict[str, Any]]


class Phase3Result(BaseModel):
    model_config = _FROZEN

    input_solutions: list[SolutionScript]
    ensemble_plans: list[str]
    ensemble_scores: list[float | None]
    best_ensemble: SolutionScript
    best_ensemble_score: float


class FinalResult(BaseModel):
    model_config = _FROZEN

    task: TaskDescription
    config: PipelineConfig
    phase1: Phase1Result
    phase2_results: list[Phase2Result]
    phase3: Phase3Result | None
    final_solution: SolutionScript
    submission_path: str
    total_duration_seconds: float
    total_cost_usd: float | None


__all__ = ["EnsembleAttempt", "FinalResult", "InnerLoopResult", "Phase1Result", "Phase2Result", "Phase3Result",
           "RefinementAttempt"]
