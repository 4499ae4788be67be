"""The node journal, a projection of ``NodeAppended`` events (plus the recorded code).

The workflow never keeps a second copy of the truth: it records a ``NodeAppended`` and applies
that same event to its journal, exactly as ``project_journal`` folds a recorded log. Fitness
is direction aware: ``score`` when maximising, ``-score`` when minimising; every "best" uses it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from events.core import SolutionRecorded, SubmissionInfo
from events.enums import MetricDirection
from events.evolution import NodeAppended
from events.score import Score
from handlers.evolution.genes import Genes, parse_genes


def fitness_of(score: float | None, direction: MetricDirection) -> float | None:
    """Higher is better; None for no score or NaN (``events.score``)."""
    return Score(direction).fitness(score)


FITNESS = Score(MetricDirection.maximize)  # fitness is already "higher is better"


@dataclass(frozen=True)
class Node:
    event: NodeAppended
    code: str = ""
    fitness: float | None = None
    # What the node's evaluation wrote (the run's own record; projections of a log leave it None).
    submission: SubmissionInfo | None = None

    # the plan's Node fields, read through
    @property
    def id(self) -> str:
        return self.event.node_id

    @property
    def index(self) -> int:
        return self.event.index

    @property
    def step(self) -> int:
        return self.event.step

    @property
    def operator(self) -> str:
        return self.event.operator

    @property
    def parents(self) -> list[str]:
        return self.event.parents

    @property
    def parent_id(self) -> str | None:
        """Plan decisions L/M: a merge's primary parent, a mutate's tournament winner."""
        return self.event.primary_parent

    @property
    def gene_sources(self) -> dict[str, str]:
        return self.event.gene_sources

    @property
    def score(self) -> float | None:
        return self.event.score

    @property
    def dead(self) -> bool:
        return self.event.dead

    @property
    def is_buggy(self) -> bool:
        return self.event.is_buggy

    @property
    def valid(self) -> bool:
        return self.event.valid

    @property
    def approach_tag(self) -> str | None:
        return self.event.approach_tag

    @property
    def debug_attempts(self) -> int:
        return self.event.debug_attempts

    @cached_property
    def genes(self) -> Genes:
        """Parsed once per node: the gene pools read every node's genes at every step, and a
        resume replays every step, so parsing them anew made a day-long run's resume quadratic."""
        return parse_genes(self.code)


@dataclass
class Journal:
    direction: MetricDirection
    nodes: list[Node] = field(default_factory=list)
    _by_id: dict[str, Node] = field(default_factory=dict)
    # parent id -> its merge/mutate children in journal order: the pheromone of every node counts
    # its children at every step, and a scan per node made each step quadratic in the journal
    _children: dict[str, list[Node]] = field(default_factory=dict)
    # the best node so far, among valid nodes (True) or all (False): kept as nodes are appended,
    # as ``best`` would find it scanning them in order (asked for at every step of the search)
    _best: dict[bool, Node | None] = field(default_factory=lambda: {True: None, False: None})

    def apply(self, event: NodeAppended, code: str, submission: SubmissionInfo | None = None) -> Node:
        if event.index != len(self.nodes):
            raise ValueError(f"node {event.node_id} has index {event.index}, journal has {len(self.nodes)} nodes")
        if event.node_id in self._by_id:
            raise ValueError(f"node {event.node_id} appended twice")
        node = Node(event=event, code=code, fitness=fitness_of(event.score, self.direction), submission=submission)
        self.nodes.append(node)
        self._by_id[node.id] = node
        if node.operator in ("merge", "mutate"):
            for parent in dict.fromkeys(node.parents):  # a parent named twice has the child once
                self._children.setdefault(parent, []).append(node)
        for only_valid, best in self._best.items():
            if _improves_on(node, best, only_valid):
                self._best[only_valid] = node
        return node

    def __len__(self) -> int:
        return len(self.nodes)

    def get(self, node_id: str) -> Node:
        return self._by_id[node_id]

    def has(self, node_id: str) -> bool:
        return node_id in self._by_id

    def valid_pool(self) -> list[Node]:
        """Plan §9: not buggy, not dead, genes valid (journal order)."""
        return [n for n in self.nodes if n.valid]

    def dead_count(self) -> int:
        return sum(1 for n in self.nodes if n.dead)

    def dead_rate(self) -> float | None:
        """Plan §16: dead / (dead + valid); None before any such node exists."""
        dead, valid = self.dead_count(), len(self.valid_pool())
        return None if dead + valid == 0 else dead / (dead + valid)

    def children_of(self, node_id: str) -> list[Node]:
        """The merge and mutate nodes naming ``node_id`` among their parents, in journal order."""
        return list(self._children.get(node_id, ()))

    def draft_history(self) -> list[dict[str, Any]]:
        """(step, approach_tag, metric or "failed") of every node that is not dead and has a tag,
        in step order (plan §5, decisions "Draft history")."""
        rows = [n for n in self.nodes if not n.dead and n.approach_tag]
        rows.sort(key=lambda n: n.step)
        return [{"step": n.step, "approach_tag": n.approach_tag,
                 "metric": "failed" if n.score is None else n.score} for n in rows]

    def best(self, *, only_valid: bool = True) -> Node | None:
        """Highest fitness; later nodes win ties (the project's ``>=`` convention)."""
        return self._best[only_valid]


def _improves_on(n: Node, best: Node | None, only_valid: bool) -> bool:
    """Whether ``n``, appended after ``best``, becomes the best (``Journal.best``'s rule)."""
    if n.fitness is None or (only_valid and not n.valid) or n.dead:
        return False
    return best is None or FITNESS.at_least(n.fitness, best.fitness)


def project_journal(events: Iterable[Any], direction: MetricDirection) -> Journal:
    """Fold a run's events (``NodeAppended`` and ``SolutionRecorded``) into its journal."""
    contents: dict[str, str] = {}
    journal = Journal(direction=direction)
    for ev in events:
        if isinstance(ev, tuple):  # (scope, event) pairs are accepted too
            ev = ev[1]
        if isinstance(ev, SolutionRecorded):
            contents.setdefault(ev.solution_id, ev.content)
        elif isinstance(ev, NodeAppended):
            journal.apply(ev, contents.get(ev.solution_id or "", ""))
    return journal
