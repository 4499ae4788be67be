"""Phase 1 decisions (Algorithm 1): what was retrieved, how candidates ranked, each merge's verdict."""

from __future__ import annotations

from typing import ClassVar

from events.agent_outputs import RetrievedModel
from events.base import Event, register


@register
class ModelsRetrieved(Event):
    type_name: ClassVar[str] = "ModelsRetrieved"

    models: list[RetrievedModel]
    requested: int
    dropped_empty: int = 0


@register
class CandidateEvaluated(Event):
    type_name: ClassVar[str] = "CandidateEvaluated"

    index: int
    model_name: str
    solution_id: str | None
    score: float | None
    error: str = ""


@register
class CandidatesRanked(Event):
    """Algorithm 1 line 6: the permutation π, best first; failed candidates excluded."""

    type_name: ClassVar[str] = "CandidatesRanked"

    order: list[int]
    scores: list[float]
    excluded: list[int]


@register
class MergeDecided(Event):
    """Algorithm 1 lines 9-16: merge s_0 with candidate π(i); accepted iff h(s) >= h_best."""

    type_name: ClassVar[str] = "MergeDecided"

    candidate_index: int
    accepted: bool
    score: float | None
    best: float
    solution_id: str
    reason: str = ""


@register
class SafetyCheckApplied(Event):
    """The post-merge data-usage and leakage checks (REQ-P1-030/031)."""

    type_name: ClassVar[str] = "SafetyCheckApplied"

    check: str  # "data" | "leakage"
    changed: bool
    kept_solution_id: str
    score: float
    fell_back: bool = False
