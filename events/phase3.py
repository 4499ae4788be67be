"""Decisions of Phase 3 (Algorithm 3, ensembling) and of finalization (spec 08), plus the
values those phases hand back to the orchestrator.

Every choice the two phases make is an explicit event, so the audit trail answers "which
plan did round r use, what did it score, which round won, was subsampling removed, did a
submission come out, and if not, why" without re-reading agent replies.

Scopes: Phase 3 records in ``phase3``, finalization in ``final``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from events.agent_outputs import DataContaminationResult
from events.base import Event, register, upcaster
from events.core import SubmissionInfo
from events.results import EnsembleAttempt, Phase3Result
from events.values import SolutionScript

# --- Phase 3 ----------------------------------------------------------------------------------

#: How an ensemble round ended. Everything but "evaluated" leaves the round's score None.
RoundStatus = Literal["evaluated", "failed", "planner_failed", "ensembler_failed", "deadline"]


@register
class EnsemblePlanned(Event):
    """A_ens_planner proposed plan e_r for ``round`` (Algorithm 3 lines 1 and 5)."""

    type_name: ClassVar[str] = "EnsemblePlanned"

    round: int
    plan: str


@register
class EnsembleRoundCompleted(Event):
    """One of the R ensemble attempts is settled; exactly R of these per Phase 3 run.

    ``solution_id`` is the ensemble script that was kept for the round (after leakage fixes
    and debugging), None when no script came into being (planner or ensembler failure,
    deadline).

    v2 adds ``scored_rows``: the validation rows ``score`` is on when fewer than all (a round
    whose cross-validation the deadline cut to some of its folds); ``None``: every row, as in
    every v1 log. Rounds and inputs are compared by ``events.score``'s rows rule."""

    type_name: ClassVar[str] = "EnsembleRoundCompleted"
    version: ClassVar[int] = 2

    round: int
    plan: str
    score: float | None
    solution_id: str | None
    status: RoundStatus
    reason: str = ""
    scored_rows: int | None = Field(default=None, gt=0)


@upcaster("EnsembleRoundCompleted", 1)
def _ensemble_round_completed_v1_to_v2(payload: dict[str, Any]) -> dict[str, Any]:
    """v1 rounds were scored on every validation row (no script could say otherwise)."""
    return {**payload, "scored_rows": None}


@register
class EnsembleSelected(Event):
    """Algorithm 3 line 9: the round that won (last one on ties), or the best input
    (``fallback``; ``round`` None) when every round failed (REQ-P3-026)."""

    type_name: ClassVar[str] = "EnsembleSelected"

    round: int | None
    score: float
    solution_id: str
    fallback: bool
    reason: str = ""


class Phase3Outcome(Phase3Result):
    """A ``Phase3Result`` (REQ-DM-024) that also carries the R ``EnsembleAttempt`` records
    (REQ-P3-032/033) and the winning round (None on the REQ-P3-026 fallback or the
    REQ-P3-018 skip). It *is* a Phase3Result, so it goes wherever one is expected."""

    attempts: list[EnsembleAttempt] = []
    best_round: int | None = None
    skipped: bool = False


# --- finalization -----------------------------------------------------------------------------


@register
class SubsamplingRemoved(Event):
    """REQ-FN-007: ``block`` was found verbatim in ``source_solution_id`` and replaced by
    ``replacement``, giving ``solution_id``."""

    type_name: ClassVar[str] = "SubsamplingRemoved"

    source_solution_id: str
    solution_id: str
    block: str
    replacement: str


@register
class SubmissionProduced(Event):
    """The test script ``solution_id`` ran and wrote a submission the engine checked
    against the sample submission (REQ-FN-021/022)."""

    type_name: ClassVar[str] = "SubmissionProduced"

    solution_id: str
    path: str
    rows: int | None
    columns: list[str] = []
    valid: bool
    reason: str = ""


@register
class FinalizationFellBack(Event):
    """REQ-FN-025: no valid submission; the final solution is the validation solution
    ``solution_id`` and the run's submission path is empty."""

    type_name: ClassVar[str] = "FinalizationFellBack"

    reason: str
    solution_id: str
    score: float | None


@register
class ContaminationChecked(Event):
    """REQ-FN-031/032: one verdict per reference discussion (None = unparseable) and the
    overall verdict (any "Same" wins; None when inconclusive)."""

    type_name: ClassVar[str] = "ContaminationChecked"

    verdicts: list[str | None]
    verdict: str | None


class FinalizationOutcome(BaseModel):
    """What ``run_finalization`` hands back: the final solution (the executed test script,
    or the validation solution on fallback), where its submission is, and why not if not."""

    model_config = ConfigDict(frozen=True)

    final_solution: SolutionScript
    final_solution_id: str
    submission_path: str                       # "" when no valid submission was produced
    submission: SubmissionInfo | None = None   # the engine's check of the last test run
    fallback_reason: str | None = None         # None on success
    contamination: DataContaminationResult | None = None

    @property
    def fell_back(self) -> bool:
        return self.fallback_reason is not None


__all__ = [
    "ContaminationChecked",
    "EnsemblePlanned",
    "EnsembleRoundCompleted",
    "EnsembleSelected",
    "FinalizationFellBack",
    "FinalizationOutcome",
    "Phase3Outcome",
    "RoundStatus",
    "SubmissionProduced",
    "SubsamplingRemoved",
]
