"""Pheromone, gene plan, degeneration check, primary parent and tournament (plan §7, §16)."""

from __future__ import annotations

import math
import random

import pytest

from events.domain import MetricDirection
from handlers.evolution.genes import LOCI
from handlers.evolution.journal import Journal
from handlers.evolution.selection import (
    content_sources,
    gene_pools,
    get_primary_parent,
    pheromone_with_degenerate_check,
    pheromones,
    select_gene_plan,
    tournament_select,
)
from tests.evolution.helpers import add_node, long


def all_real(tag: str) -> dict[str, str]:
    return {locus: long(f"{tag}-{locus}") for locus in LOCI}


def test_pheromone_formula():
    j = Journal(MetricDirection.maximize)
    add_node(j, "a", 1.0, all_real("a"))
    add_node(j, "b", 0.0, all_real("b"))
    add_node(j, "c", 0.5, all_real("c"), operator="mutate", parents=["b"])   # a child of b that beat it
    add_node(j, "d", None, all_real("d"), operator="mutate", parents=["b"], dead=True)
    P = pheromones(j, current_step=4)
    assert set(P) == {"a", "b", "c"}                                   # valid pool only
    assert P["a"] == pytest.approx(0.5 * 1.0 + 0.3 * 0 + 0.2 * math.exp(-0.05 * 4))
    assert P["b"] == pytest.approx(0.5 * 0.0 + 0.3 * 0.5 + 0.2 * math.exp(-0.05 * 3))   # 1 of 2 children won
    assert P["c"] == pytest.approx(0.5 * 0.5 + 0.2 * math.exp(-0.05 * 2))


def test_gene_quality_and_identical_genes_count_once():
    j = Journal(MetricDirection.maximize)
    shared = long("shared data")
    add_node(j, "a", 1.0, {**all_real("a"), "DATA": shared})
    add_node(j, "b", 0.0, {**all_real("b"), "DATA": shared})
    pools = gene_pools(j, current_step=2)
    P = pheromones(j, current_step=2)
    assert len(pools["DATA"]) == 1                                     # one gene, two carriers
    item = pools["DATA"][0]
    G = (P["a"] + P["b"]) / 2 * math.exp(-0.03 * (2 - 1))
    assert item.source == "a"                                          # represented by its best carrier
    assert item.quality == pytest.approx(0.7 * P["a"] + 0.3 * G)
    assert len(pools["MODEL"]) == 2 and pools["MODEL"][0].source == "a"


def test_a_stub_wins_a_locus_only_without_a_real_gene():
    j = Journal(MetricDirection.maximize)
    add_node(j, "best", 1.0, {**all_real("best"), "LOSS": "# n/a"})
    add_node(j, "weak", 0.0, all_real("weak"))
    plan = select_gene_plan(gene_pools(j))
    assert plan["LOSS"].source == "weak" and not plan["LOSS"].stub
    assert plan["MODEL"].source == "best"
    j2 = Journal(MetricDirection.maximize)
    add_node(j2, "x", 1.0, {"DATA": long("x")})
    assert select_gene_plan(gene_pools(j2))["LOSS"].stub


def test_degeneration_check_replaces_the_dominant_source_and_keeps_two_parents():
    """Two nodes, A best everywhere: every locus moves to B, which is a single source again,
    so the locus where A leads most returns to A; the child mixes A and B."""
    j = Journal(MetricDirection.maximize)
    add_node(j, "A", 0.9, all_real("A"))
    add_node(j, "B", 0.5, all_real("B"))
    naive = select_gene_plan(gene_pools(j))
    assert {item.source for item in naive.values()} == {"A"}          # top-1 degenerates to a copy
    plan, fix = pheromone_with_degenerate_check(j)
    assert fix is not None and fix.dominant == "A"
    assert fix.before == dict.fromkeys(LOCI, "A")
    assert fix.restored is not None and plan[fix.restored].source == "A"
    assert sorted({item.source for item in plan.values()}) == ["A", "B"]
    assert len(fix.replaced) == 6 and fix.after[fix.restored] == "A"


def test_degeneration_check_with_three_nodes_needs_no_restore():
    j = Journal(MetricDirection.maximize)
    add_node(j, "A", 0.9, all_real("A"))
    add_node(j, "B", 0.5, {**all_real("B"), "DATA": long("A-DATA")})          # shares A's DATA gene
    add_node(j, "C", 0.4, all_real("C"))
    plan, fix = pheromone_with_degenerate_check(j)
    assert fix is not None and fix.restored is None
    assert plan["DATA"].source == "C"                  # B's DATA is A's gene, represented by A
    assert {plan[lc].source for lc in LOCI if lc != "DATA"} == {"B"}


def test_degeneration_never_forces_a_replacement():
    j = Journal(MetricDirection.maximize)
    add_node(j, "A", 0.9, all_real("A"))
    add_node(j, "B", 0.5, {"DATA": long("B-data")})           # only DATA is a real alternative
    plan, fix = pheromone_with_degenerate_check(j)
    assert fix is not None
    assert fix.replaced == ["DATA"] and plan["DATA"].source == "B"
    assert all(plan[lc].source == "A" for lc in LOCI if lc != "DATA")   # a stub never displaces a real gene
    j1 = Journal(MetricDirection.maximize)
    add_node(j1, "solo", 0.9, all_real("solo"))
    plan, fix = pheromone_with_degenerate_check(j1)
    assert fix is not None and fix.replaced == [] and fix.kept == list(LOCI)


def test_no_degeneration_when_the_plan_already_mixes():
    j = Journal(MetricDirection.maximize)
    add_node(j, "A", 0.9, {**all_real("A"), "MODEL": "# n/a"})
    add_node(j, "B", 0.5, all_real("B"))
    plan, fix = pheromone_with_degenerate_check(j)
    assert fix is None and plan["MODEL"].source == "B"


def test_primary_parent_is_the_source_with_most_genes():
    j = Journal(MetricDirection.maximize)
    for nid, s in (("A", 0.5), ("B", 0.9), ("C", 0.1)):
        add_node(j, nid, s, all_real(nid))
    plan = dict(zip(LOCI, ["A", "A", "A", "A", "B", "B", "C"]))
    assert get_primary_parent(plan, j)[0] == "A"
    assert get_primary_parent(plan, j)[1] == {"A": 4, "B": 2, "C": 1}


def test_primary_parent_ties_go_to_higher_fitness_then_older_node():
    j = Journal(MetricDirection.maximize)
    add_node(j, "A", 0.5, all_real("A"))
    add_node(j, "B", 0.9, all_real("B"))
    add_node(j, "C", 0.9, all_real("C"))
    tie_ab = dict(zip(LOCI, ["A", "A", "A", "B", "B", "B", "C"]))
    primary, _, tied, why = get_primary_parent(tie_ab, j)
    assert (primary, tied) == ("B", ["A", "B"]) and "fitness" in why
    tie_bc = dict(zip(LOCI, ["C", "C", "C", "B", "B", "B", "A"]))
    assert get_primary_parent(tie_bc, j)[0] == "B"                 # equal fitness: the older node


def test_primary_parent_ties_are_direction_aware_and_survive_missing_metrics():
    j = Journal(MetricDirection.minimize)
    add_node(j, "A", 0.5, all_real("A"))
    add_node(j, "B", 0.9, all_real("B"))
    plan = dict(zip(LOCI, ["B", "A", "A", "B", "B", "A", "C"]))
    assert get_primary_parent(plan, j)[0] == "A"                   # lower loss wins when minimising
    j2 = Journal(MetricDirection.maximize)
    add_node(j2, "X", None, all_real("X"), valid=False)
    add_node(j2, "Y", None, all_real("Y"), valid=False)
    plan = dict(zip(LOCI, ["Y", "X", "Y", "X", "Y", "X", "Z"]))
    primary, _, _, why = get_primary_parent(plan, j2)
    assert primary == "Y" and "first source" in why


def test_tournament_draws_k_distinct_entrants_and_the_fittest_wins():
    j = Journal(MetricDirection.minimize)
    for i, s in enumerate([0.3, 0.1, 0.2, 0.4, 0.1]):
        add_node(j, f"n{i}", s, all_real(f"n{i}"))
    pool = j.valid_pool()
    for seed in range(50):
        winner, entrants = tournament_select(pool, 3, random.Random(seed))
        assert len({e.id for e in entrants}) == 3
        best = min(e.score for e in entrants)
        assert winner.score == best
        assert winner.index == min(e.index for e in entrants if e.score == best)
    winner, entrants = tournament_select(pool[:2], 3, random.Random(0))
    assert len(entrants) == 2 and winner.id == "n1"


def test_degeneration_counts_real_genes_not_identical_stubs():
    """Identical stubs are one gene attributed to one carrier: a plan whose real genes all come
    from one node is still a copy, before and after the fix."""
    real = ("DATA", "MODEL", "REGULARIZATION", "TRAINING_TRICKS")
    j = Journal(MetricDirection.maximize)
    add_node(j, "A", 0.9, {lc: long(f"A-{lc}") for lc in real})
    add_node(j, "B", 0.5, {lc: long(f"B-{lc}") for lc in real})
    plan, fix = pheromone_with_degenerate_check(j)
    assert fix is not None and fix.dominant == "A"
    assert fix.restored in real
    assert content_sources(plan) == ["A", "B"]
    assert sorted({plan[lc].source for lc in real}) == ["A", "B"]
