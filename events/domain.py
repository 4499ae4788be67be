"""The domain vocabulary of spec 01 (REQ-DM-001..050) at one import.

Each part lives in the module of what it is: ``events.enums`` (the closed vocabularies),
``events.config`` (``PipelineConfig``), ``events.values`` (the task, scripts, evaluation
results), ``events.results`` (what the phases return) and ``events.errors`` (the pipeline's
exceptions). This module re-exports them so that ``from events.domain import …`` keeps working
for the library's users and for code written before the split; new code in ``events/`` and
``handlers/`` imports from the module of what it needs.

Only pydantic, the standard library and the agents' structured answers
(``events.agent_outputs``) are imported by these modules (REQ-DM-050).
"""

from __future__ import annotations

from events.config import ModelPrice, PhaseTimeBudget, PipelineConfig
from events.enums import AgentType, CodeBlockCategory, DataModality, MetricDirection, SolutionPhase, TaskType
from events.errors import PipelineError, PipelineTimeoutError
from events.results import (
    EnsembleAttempt,
    FinalResult,
    InnerLoopResult,
    Phase1Result,
    Phase2Result,
    Phase3Result,
    RefinementAttempt,
)
from events.values import (
    CodeBlock,
    EvaluationResult,
    ExecutionRawResult,
    SolutionScript,
    TaskDescription,
    solution_id_of,
)

__all__ = [
    "AgentType", "CodeBlock", "CodeBlockCategory", "DataModality", "EnsembleAttempt", "EvaluationResult",
    "ExecutionRawResult", "FinalResult", "InnerLoopResult", "MetricDirection", "ModelPrice", "Phase1Result",
    "Phase2Result", "Phase3Result", "PhaseTimeBudget", "PipelineConfig", "PipelineError", "PipelineTimeoutError",
    "RefinementAttempt", "SolutionPhase", "SolutionScript", "TaskDescription", "TaskType", "solution_id_of",
]
