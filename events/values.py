"""The values the phases pass around (spec 01): the task, a solution script and its content
address, a code block, an evaluation's result. All frozen except ``SolutionScript``, whose
``score`` is filled in after evaluation."""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone

from pydantic import BaseModel, ConfigDict, Field

from events.enums import CodeBlockCategory, DataModality, MetricDirection, SolutionPhase, TaskType

_FROZEN = ConfigDict(frozen=True)


class TaskDescription(BaseModel):
    """REQ-DM-007."""

    model_config = _FROZEN

    competition_id: str
    task_type: TaskType
    data_modality: DataModality
    evaluation_metric: str
    metric_direction: MetricDirection
    description: str
    data_dir: str = "./input"
    output_dir: str = "./final"


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


class SolutionScript(BaseModel):
    """REQ-DM-009: a full Python program; mutable so the score can be set after evaluation.

    ``created_at`` is wall-clock metadata and is excluded from anything the engine compares
    or hashes: a solution's identity is its content (``solution_id``).
    """

    model_config = ConfigDict(frozen=False)

    content: str
    phase: SolutionPhase
    score: float | None = None
    is_executable: bool = True
    source_model: str | None = None
    # Wall-clock metadata, never serialised: payloads (and so replay) must not depend on when
    # a handler happened to build the object.
    created_at: datetime = Field(default_factory=_utcnow, exclude=True)

    @property
    def solution_id(self) -> str:
        return solution_id_of(self.content)

    def replace_block(self, old: str, new: str) -> SolutionScript:
        """REQ-DM-010: a NEW script with the first occurrence of ``old`` replaced by ``new``.

        The score is reset to None and is_executable to True: the content changed, so the old
        evaluation says nothing about it (digest §9.6); phase and source_model are kept.
        """
        if old not in self.content:
            raise ValueError("code block not found in solution content")
        return SolutionScript(
            content=self.content.replace(old, new, 1),
            phase=self.phase,
            score=None,
            is_executable=True,
            source_model=self.source_model,
        )


def solution_id_of(content: str) -> str:
    """Content address of a script: first 16 hex digits of its sha256."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()[:16]


class CodeBlock(BaseModel):
    """REQ-DM-012."""

    model_config = _FROZEN

    content: str
    category: CodeBlockCategory | None = None
    outer_step: int | None = None


# --- an evaluation's result (REQ-DM-021..025) -------------------------------------------


class EvaluationResult(BaseModel):
    model_config = _FROZEN

    score: float | None = None
    stdout: str
    stderr: str
    exit_code: int
    duration_seconds: float
    is_error: bool
    error_traceback: str | None = None


class ExecutionRawResult(BaseModel):
    """REQ-EX-008."""

    model_config = _FROZEN

    stdout: str
    stderr: str
    exit_code: int
    duration_seconds: float
    timed_out: bool


__all__ = ["CodeBlock", "EvaluationResult", "ExecutionRawResult", "SolutionScript", "TaskDescription",
           "solution_id_of"]
