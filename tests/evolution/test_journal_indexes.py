"""The journal's indexes (a node's children, the best node) and the gene pools built from them
decide exactly as the scans they replace (a day-long run's resume replays every step, and the
scans made each step cost the whole journal): random journals, compared with the plain rules."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from events.domain import MetricDirection
from handlers.evolution.genes import LOCI, is_stub
from handlers.evolution.journal import FITNESS, Journal, Node
from handlers.evolution.selection import GENE_DECAY, W_GENE, W_NODE, GeneItem, gene_pools, pheromones
from tests.evolution.helpers import add_node, long

BODIES = [long("a"), long("b"), long("c"), "pass", "# n/a"]  # real genes, and stubs


@st.composite
def journals(draw: st.DrawFn) -> Journal:
    journal = Journal(MetricDirection(draw(st.sampled_from(["maximize", "minimize"]))))
    for i in range(draw(st.integers(1, 14))):
        ids = [n.id for n in journal.nodes]
        operator = draw(st.sampled_from(["draft", "mutate", "merge"])) if ids else "draft"
        parents = draw(st.lists(st.sampled_from(ids), min_size=1, max_size=3)) if operator != "draft" else []
        score = draw(st.one_of(st.none(), st.sampled_from([0.0, 0.5, 0.5, 1.0, math.nan])))
        add_node(journal, f"n{i}", score, {locus: draw(st.sampled_from(BODIES)) for locus in LOCI},
                 operator=operator, parents=parents, valid=draw(st.booleans()), dead=draw(st.booleans()))
    return journal


def best_by_scan(journal: Journal, only_valid: bool) -> Node | None:
    best: Node | None = None
    for n in journal.nodes:
        if n.fitness is None or (only_valid and not n.valid) or n.dead:
            continue
        if best is None or FITNESS.at_least(n.fitness, best.fitness):
            best = n
    return best


def pools_by_scan(journal: Journal, now: int) -> dict[str, list[GeneItem]]:
    """gene_pools as it was written before: every carrier an item, the best one kept."""
    P = pheromones(journal, now)
    pools: dict[str, list[GeneItem]] = {}
    for locus in LOCI:
        carriers: dict[str, list[Node]] = {}
        for n in journal.valid_pool():
            gid = n.event.gene_ids.get(locus)
            if gid is not None:
                carriers.setdefault(gid, []).append(n)
        items = []
        for gid in sorted(carriers):
            group = carriers[gid]
            G = sum(P[c.id] for c in group) / len(group) * math.exp(-GENE_DECAY * (now - max(c.index for c in group)))
            items.append(min((GeneItem(locus=locus, gene_id=gid, source=c.id, quality=W_NODE * P[c.id] + W_GENE * G,
                                       fitness=c.fitness if c.fitness is not None else -math.inf, index=c.index,
                                       stub=is_stub(c.genes.bodies.get(locus, "")), code=c.genes.bodies.get(locus, ""))
                              for c in group), key=GeneItem.rank_key))
        pools[locus] = sorted(items, key=GeneItem.rank_key)
    return pools


@settings(max_examples=150, deadline=None)
@given(journals(), st.integers(0, 5))
def test_the_indexes_and_pools_decide_as_the_scans(journal: Journal, later: int) -> None:
    for n in journal.nodes:
        assert journal.children_of(n.id) == [c for c in journal.nodes
                                             if c.operator in ("merge", "mutate") and n.id in c.parents]
    for only_valid in (True, False):
        assert journal.best(only_valid=only_valid) is best_by_scan(journal, only_valid)
    now = len(journal) + later
    assert gene_pools(journal, now) == pools_by_scan(journal, now)
