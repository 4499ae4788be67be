"""Decisions of the two-phase evolutionary search (strategy ``evolve``, scope ``evolve``).

Every choice the strategy makes is one of these events, with its reasons, so a run's search
is an audit trail and replay can check each choice: which operator a step drew, which nodes
entered a tournament and who won, the merge's gene plan (each locus's source and quality),
the degeneration fix, the primary parent, the mutate target locus, each chained-debug
attempt, the node appended to the journal, epoch and phase ends, profile rewrites and the
final selection.

``NodeAppended`` is the journal's only source: ``handlers.evolution.journal.project_journal``
folds these (plus ``SolutionRecorded`` for the code) into the node journal.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from events.base import Event, register

Operator = Literal["draft", "merge", "mutate"]


@register
class OperatorDrawn(Event):
    """A step started: its operator, and why (Phase 1 always drafts; Phase 2 draws with
    ``merge_ratio`` from the step's seeded RNG). ``profile`` is the agent profile it uses."""

    type_name: ClassVar[str] = "EvoOperatorDrawn"

    step: int
    phase: Literal["draft", "evolve"]
    global_epoch: int
    operator: Operator
    profile: int
    draw: float | None = None
    merge_ratio: float | None = None
    reason: str = ""


@register
class TournamentHeld(Event):
    """Mutate's parent: k distinct entrants from the valid pool, the fittest wins."""

    type_name: ClassVar[str] = "EvoTournamentHeld"

    step: int
    k: int
    entrants: list[str]
    fitness: dict[str, float]
    winner: str
    reason: str = ""


@register
class GenePlanChosen(Event):
    """Merge's gene plan: per locus the source node, gene id, quality and stub flag.

    ``plan`` maps every locus to ``{"source", "gene_id", "quality", "fitness", "stub"}``;
    ``degenerate`` says whether the pheromone top-1 plan had a single source before the fix.
    """

    type_name: ClassVar[str] = "EvoGenePlanChosen"

    step: int
    plan: dict[str, dict[str, Any]]
    degenerate: bool
    pool_size: int
    sources: list[str]


@register
class DegenerationFixed(Event):
    """All seven pheromone winners came from ``dominant``: each locus took its best gene from
    another node where one existed; ``restored`` is the locus returned to ``dominant`` when the
    replacement again had a single source (so the child always mixes two parents)."""

    type_name: ClassVar[str] = "EvoDegenerationFixed"

    step: int
    dominant: str
    before: dict[str, str]
    after: dict[str, str]
    replaced: list[str]
    kept: list[str]
    restored: str | None = None
    reason: str = ""


@register
class PrimaryParentChosen(Event):
    """The merge's skeleton: the source with most loci (ties: higher fitness, then older)."""

    type_name: ClassVar[str] = "EvoPrimaryParentChosen"

    step: int
    primary: str
    counts: dict[str, int]
    tied: list[str]
    reason: str


@register
class TargetLocusChosen(Event):
    """Mutate's target: random among non-stub loci (any locus if all are stubs)."""

    type_name: ClassVar[str] = "EvoTargetLocusChosen"

    step: int
    parent: str
    locus: str
    candidates: list[str]
    all_stubs: bool


@register
class DebugAttempted(Event):
    """One link of the debug chain: the failing version and its error went in, a fix came out."""

    type_name: ClassVar[str] = "EvoDebugAttempted"

    step: int
    attempt: int
    input_solution_id: str
    input_error: str
    output_solution_id: str | None
    ok: bool
    error: str = ""


@register
class NodeAppended(Event):
    """The step's one journal node, dead or alive (it counts against ``max_steps``).

    ``index`` is its journal position (append order); ``step`` the order its step started.
    ``gene_sources`` names a node for each of the seven loci (``node_id`` itself for genes
    this node introduced); ``gene_ids`` the content hash of each gene (empty when the genes
    do not validate). ``valid`` = in the valid pool: not dead, not buggy, genes valid.
    """

    type_name: ClassVar[str] = "EvoNodeAppended"

    node_id: str
    index: int
    step: int
    phase: Literal["draft", "evolve"]
    global_epoch: int
    operator: Operator
    profile: int
    solution_id: str | None
    parents: list[str]
    primary_parent: str | None
    gene_sources: dict[str, str]
    gene_ids: dict[str, str]
    stub_loci: list[str]
    genes_valid: bool
    score: float | None
    dead: bool
    is_buggy: bool
    valid: bool
    debug_attempts: int
    approach_tag: str | None = None
    summary: str = ""
    failure: str = ""


@register
class EpochCompleted(Event):
    type_name: ClassVar[str] = "EvoEpochCompleted"

    phase: Literal["draft", "evolve"]
    phase_epoch: int
    global_epoch: int
    steps: int
    nodes: int
    valid: int
    dead: int


@register
class PhaseOneEnded(Event):
    """Phase 1 stopped after an epoch: why, and the plan's log line."""

    type_name: ClassVar[str] = "EvoPhaseOneEnded"

    nodes: int
    valid_pool: int
    dead: int
    target: int
    epochs: int
    reason: Literal["target_reached", "budget_exhausted", "time_limit", "cost_limit"]
    dead_rate: float | None
    log_line: str


@register
class EvolutionStopped(Event):
    """The search ended (Phase 2 done): node budget spent, time or cost limit, or too small a pool."""

    type_name: ClassVar[str] = "EvoEvolutionStopped"

    reason: Literal["budget_exhausted", "time_limit", "cost_limit", "valid_pool_too_small"]
    nodes: int
    valid_pool: int
    phase2_epochs: int


@register
class ProfilesEvolved(Event):
    """Agent-level evolution at a global epoch: scores, elites and every rewrite."""

    type_name: ClassVar[str] = "EvoProfilesEvolved"

    global_epoch: int
    scores: list[float]
    elites: list[int]
    rewrites: dict[str, dict[str, Any]]   # str(profile index) -> {elite, before, after, changed, reason}
    profiles: list[str]                   # the texts in use from the next step on


@register
class FinalNodeSelected(Event):
    """The node whose solution becomes the submission."""

    type_name: ClassVar[str] = "EvoFinalNodeSelected"

    node_id: str
    solution_id: str
    score: float | None
    valid: bool
    candidates: int
    reason: str


__all__ = [
    "DebugAttempted",
    "DegenerationFixed",
    "EpochCompleted",
    "EvolutionStopped",
    "FinalNodeSelected",
    "GenePlanChosen",
    "NodeAppended",
    "OperatorDrawn",
    "PhaseOneEnded",
    "PrimaryParentChosen",
    "ProfilesEvolved",
    "TargetLocusChosen",
    "TournamentHeld",
]
