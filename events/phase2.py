"""Phase 2 decisions (Algorithm 2): what each outer and inner step decided, as events.

With these in the log, a path's story is a query: which ablation summary led to which code
block and plan (``BlockExtracted``), what every refinement attempt scored and which solution it
produced (``RefinementAttempted``), how the path's best moved step by step
(``OuterStepCompleted``) and which paths failed (``PathFailed``). Solutions themselves are
``SolutionRecorded`` events naming their parents; these events point at them by id.

All are decisions (re-derived and compared on replay), scoped ``phase2/path-<i>``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from events.base import Event, register

BlockMatch = Literal["exact", "normalised", "reasked", "alternative"]


@register
class AblationSummarized(Event):
    """Step t's ablation study and what was learned from it (REQ-P2O-011/021/036).

    ``summary`` is what enters T_abl: the summarizer's text, the raw-output fallback, or ``""``
    when the ablation could not be run (``ablation_ok`` False).
    """

    type_name: ClassVar[str] = "AblationSummarized"

    outer_step: int
    summary: str
    ablation_solution_id: str | None = None
    ablation_ok: bool
    fallback: bool = False  # True when the summary is the "[Auto-summary from raw output]" text


@register
class BlockExtracted(Event):
    """The code block c_t and first plan p_0 chosen at step t (REQ-P2O-015/018).

    ``match`` tells how the block was found in the script: ``exact``; ``normalised`` (trailing
    whitespace ignored, mapped back to the script's own text); ``reasked`` (found after a
    corrective re-ask); ``alternative`` (another plan of the extractor's list).
    """

    type_name: ClassVar[str] = "BlockExtracted"

    outer_step: int
    code_block: str
    plan: str
    match: BlockMatch
    extractor_calls: int
    plan_index: int = 0


@register
class BlockExtractionFailed(Event):
    """No usable block at step t: the step is skipped (REQ-P2O-034, REQ-P2O-018 rung 4)."""

    type_name: ClassVar[str] = "BlockExtractionFailed"

    outer_step: int
    reason: str
    extractor_calls: int


@register
class RefinementAttempted(Event):
    """Inner attempt k of step t (REQ-P2I-028). ``score`` None means it produced no score;
    ``failure`` says why (planner, coder, replace, evaluation, deadline)."""

    type_name: ClassVar[str] = "RefinementAttempted"

    outer_step: int
    k: int
    plan: str
    score: float | None
    code_block: str
    solution_id: str | None = None
    was_improvement: bool
    failure: str | None = None


@register
class OuterStepCompleted(Event):
    """The step record of REQ-P2O-030, attempts as plain dicts, plus the path's best after it."""

    type_name: ClassVar[str] = "OuterStepCompleted"

    outer_step: int
    ablation_summary: str
    code_block: str
    plan: str
    inner_loop_attempts: list[dict[str, Any]] = []
    best_score_after_step: float
    best_solution_id: str
    was_skipped: bool
    skip_reason: str | None = None


@register
class PathFailed(Event):
    """A Phase 2 path raised unexpectedly; its slot falls back to the Phase 1 solution (REQ-OR-040)."""

    type_name: ClassVar[str] = "PathFailed"

    path: int
    error: str
    fallback_solution_id: str
    fallback_score: float


__all__ = [
    "AblationSummarized",
    "BlockExtracted",
    "BlockExtractionFailed",
    "BlockMatch",
    "OuterStepCompleted",
    "PathFailed",
    "RefinementAttempted",
]
