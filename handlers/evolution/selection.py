"""Gene and parent selection (plan §7, evolution-decisions "Fitness, direction and pheromone").

    P(n)  = 0.5·norm(n) + 0.3·succ(n) + 0.2·rec(n)          node pheromone, recomputed each time
    q     = 0.7·P(n) + 0.3·G(gene)                           quality of a gene carried by n
    G     = mean P over the gene's carriers · exp(−0.03·(current_step − last step carried))

The gene pool is the valid pool only; identical genes (same id) count once, represented by
their best carrier; a stub wins a locus only when the locus has no non-stub gene. Items are
ranked by (quality desc, fitness desc, newer step, node id). ``current_step`` is the journal's
length when the decision is made; a node's step for recency is its journal index.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from dataclasses import dataclass
from random import Random  # pure-ok: the seeded generator type only; the global RNG is never used

from events.score import Ties
from handlers.evolution.genes import LOCI, is_stub
from handlers.evolution.journal import FITNESS, Journal, Node

W_NORM, W_SUCC, W_REC = 0.5, 0.3, 0.2
W_NODE, W_GENE = 0.7, 0.3
LAMBDA = 0.05
GENE_DECAY = 0.03


@dataclass(frozen=True)
class GeneItem:
    locus: str
    gene_id: str
    source: str          # the best carrier's node id
    quality: float
    fitness: float
    index: int           # the carrier's journal index
    stub: bool
    code: str            # the body as written in the carrier

    def rank_key(self) -> tuple[float, float, int, str]:
        """Sort ascending = best first: quality desc, fitness desc, newer step, node id."""
        return (-self.quality, -self.fitness, -self.index, self.source)

    def describe(self) -> dict[str, object]:
        return {"source": self.source, "gene_id": self.gene_id, "quality": round(self.quality, 6),
                "fitness": self.fitness, "stub": self.stub}


def pheromones(journal: Journal, current_step: int | None = None) -> dict[str, float]:
    """P(n) for every node of the valid pool."""
    pool = journal.valid_pool()
    if not pool:
        return {}
    now = len(journal) if current_step is None else current_step
    fits = [n.fitness for n in pool if n.fitness is not None]
    lo, hi = (min(fits), max(fits)) if fits else (0.0, 0.0)
    out: dict[str, float] = {}
    for n in pool:
        if n.fitness is None or hi == lo:
            norm = 0.5
        else:
            norm = (n.fitness - lo) / (hi - lo)
        children = journal.children_of(n.id)
        wins = sum(1 for c in children if c.valid and n.fitness is not None and FITNESS.improves(c.fitness, n.fitness))
        succ = wins / len(children) if children else 0.0
        rec = math.exp(-LAMBDA * (now - n.index))
        out[n.id] = W_NORM * norm + W_SUCC * succ + W_REC * rec
    return out


@dataclass(frozen=True)
class _Carrier:
    """What ranking a node as a gene's carrier reads, read once per step (node fields are
    properties of its event; a step ranks every node of the valid pool at every locus)."""

    node: Node
    id: str
    index: int
    fitness: float       # -inf for none
    pheromone: float


def gene_pools(journal: Journal, current_step: int | None = None) -> dict[str, list[GeneItem]]:
    """Per locus, one item per distinct gene of the valid pool, best first."""
    now = len(journal) if current_step is None else current_step
    P = pheromones(journal, now)
    pool = [_Carrier(n, n.id, n.index, n.fitness if n.fitness is not None else -math.inf, P[n.id])
            for n in journal.valid_pool()]
    pools: dict[str, list[GeneItem]] = {}
    for locus in LOCI:
        carriers: dict[str, list[_Carrier]] = {}
        for c in pool:
            gid = c.node.event.gene_ids.get(locus)
            if gid is not None:
                carriers.setdefault(gid, []).append(c)
        items = [_gene_item(locus, gid, carriers[gid], now) for gid in sorted(carriers)]
        items.sort(key=GeneItem.rank_key)
        pools[locus] = items
    return pools


def _carrier_rank_key(gene_quality: float, c: _Carrier) -> tuple[float, float, int, str]:
    """How a gene's carriers rank (``GeneItem.rank_key``'s order on one gene): quality, fitness,
    the newest, then the id."""
    return (-(W_NODE * c.pheromone + W_GENE * gene_quality), -c.fitness, -c.index, c.id)


def _gene_item(locus: str, gene_id: str, group: list[_Carrier], now: int) -> GeneItem:
    """The gene's item, represented by its best carrier (ranked as ``GeneItem.rank_key`` ranks;
    only the winner's body is read, so a step does not test every carrier's body for a stub)."""
    last = max(c.index for c in group)
    G = sum(c.pheromone for c in group) / len(group) * math.exp(-GENE_DECAY * (now - last))
    best = min(group, key=functools.partial(_carrier_rank_key, G))
    body = best.node.genes.bodies.get(locus, "")
    return GeneItem(locus=locus, gene_id=gene_id, source=best.id, quality=W_NODE * best.pheromone + W_GENE * G,
                    fitness=best.fitness, index=best.index, stub=is_stub(body), code=body)


def best_item(items: list[GeneItem]) -> GeneItem | None:
    """Top item, a stub only when the locus has no non-stub gene."""
    real = [i for i in items if not i.stub]
    chosen = real or items
    return min(chosen, key=GeneItem.rank_key) if chosen else None


def select_gene_plan(pools: dict[str, list[GeneItem]]) -> dict[str, GeneItem]:
    plan: dict[str, GeneItem] = {}
    for locus in LOCI:
        item = best_item(pools.get(locus, []))
        if item is not None:
            plan[locus] = item
    return plan


@dataclass(frozen=True)
class DegenerationFix:
    dominant: str
    before: dict[str, str]
    after: dict[str, str]
    replaced: list[str]
    kept: list[str]
    restored: str | None


def content_sources(plan: dict[str, GeneItem]) -> list[str]:
    """The sources of the plan's non-stub genes (all sources when every winner is a stub).

    Stub genes carry no content, and identical stubs are one gene represented by a single
    carrier, so a plan whose real genes all come from D but whose stubs are attributed to E is
    still a copy of D. The degeneration check therefore counts the sources of real genes.
    """
    real = sorted({item.source for item in plan.values() if not item.stub})
    return real or sorted({item.source for item in plan.values()})


def pheromone_with_degenerate_check(journal: Journal, current_step: int | None = None
                                    ) -> tuple[dict[str, GeneItem], DegenerationFix | None]:
    """The pheromone top-1 plan; if all its real (non-stub) genes share one source D, each
    locus takes its best gene not from D where one exists (never forced; a stub never displaces
    a real gene); if the real genes then again share a single source E, the locus where D's
    quality lead is largest returns to D, so the child mixes two parents whenever two exist."""
    pools = gene_pools(journal, current_step)
    plan = select_gene_plan(pools)
    if len(plan) != len(LOCI):
        return plan, None
    sources = content_sources(plan)
    if len(sources) != 1:
        return plan, None
    dominant = sources[0]
    before = {locus: plan[locus].source for locus in LOCI}
    fixed = dict(plan)
    replaced, kept = [], []
    for locus in LOCI:
        if plan[locus].source != dominant:
            kept.append(locus)
            continue
        others = [i for i in pools[locus] if i.source != dominant]
        choice = best_item(others) if plan[locus].stub else best_item([i for i in others if not i.stub])
        if choice is None:
            kept.append(locus)
        else:
            fixed[locus] = choice
            replaced.append(locus)
    restored = None
    new_sources = content_sources(fixed)
    real_replaced = [locus for locus in replaced if not plan[locus].stub]
    if len(new_sources) == 1 and new_sources[0] != dominant and real_replaced:
        leads = [(plan[locus].quality - fixed[locus].quality, -LOCI.index(locus), locus) for locus in real_replaced]
        restored = max(leads)[2]
        fixed[restored] = plan[restored]
        replaced.remove(restored)
        kept.append(restored)
    after = {locus: fixed[locus].source for locus in LOCI}
    return fixed, DegenerationFix(dominant=dominant, before=before, after=after, replaced=replaced,
                                  kept=[locus for locus in LOCI if locus in kept], restored=restored)


def get_primary_parent(plan: dict[str, str], journal: Journal) -> tuple[str, dict[str, int], list[str], str]:
    """(primary, genes per source, the tied sources, why). ``plan`` maps locus -> source id.

    Most loci wins; ties go to the higher fitness, then the older node (lower journal index);
    if no tied source has a fitness, the first of them in locus order (plan §17).
    """
    order = [plan[locus] for locus in LOCI if locus in plan]
    counts = Counter(order)
    top = max(counts.values())
    tied = [s for s in dict.fromkeys(order) if counts[s] == top]
    if len(tied) == 1:
        return tied[0], dict(sorted(counts.items())), tied, f"contributes {top} of {len(order)} genes"
    fits = {s: journal.get(s).fitness if journal.has(s) else None for s in tied}
    older_first = sorted((s for s in tied if journal.has(s)), key=lambda s: journal.get(s).index)
    best = FITNESS.best(older_first, fits.get, Ties.FIRST_WINS)
    if best is None:
        return tied[0], dict(sorted(counts.items())), tied, "tie with no metrics: first source in locus order"
    return best, dict(sorted(counts.items())), tied, f"tie at {top} genes: higher fitness, then older node"


def tournament_select(pool: list[Node], k: int, rng: Random) -> tuple[Node, list[Node]]:
    """k = min(k, |pool|) distinct entrants drawn from ``pool``; the fittest wins, ties to the
    older node (lower journal index)."""
    if not pool:
        raise ValueError("tournament on an empty pool")
    ordered = sorted(pool, key=lambda n: n.index)
    entrants = rng.sample(ordered, k=min(k, len(ordered)))
    older_first = sorted(entrants, key=lambda n: n.index)
    fittest = FITNESS.best(older_first, lambda n: n.fitness, Ties.FIRST_WINS)
    return (fittest if fittest is not None else older_first[0]), entrants  # no fitness at all: the oldest
