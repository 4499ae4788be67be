"""What ``RunCompleted.result`` says about an evolutionary run."""

from __future__ import annotations

from typing import Any, Protocol

from events.config import PipelineConfig
from handlers.evolution.journal import FITNESS, Journal, Node


class SearchRecord(Protocol):
    """What the summary reads of the search (``handlers.evolution.search.Search``)."""

    cfg: PipelineConfig
    journal: Journal
    phase1_summary: dict[str, Any]
    phase2_epochs: int
    stop_reason: str
    global_epoch: int
    profile_evolutions: list[int]


def node_row(node: Node) -> dict[str, Any]:
    return {"node": node.id, "index": node.index, "step": node.step, "operator": node.operator,
            "phase": node.event.phase, "parents": node.parents, "primary_parent": node.parent_id,
            "score": node.score, "dead": node.dead, "is_buggy": node.is_buggy, "valid": node.valid,
            "debug_attempts": node.debug_attempts, "approach_tag": node.approach_tag,
            "solution_id": node.event.solution_id}


def offspring_report(journal: Journal, operator: str) -> list[dict[str, Any]]:
    """Each merge (or mutation) with the child's score against its parents' scores."""
    rows = []
    for node in journal.nodes:
        if node.operator != operator:
            continue
        parents = {p: journal.get(p).score for p in node.parents if journal.has(p)}
        parent_fits = [f for f in (journal.get(p).fitness for p in node.parents if journal.has(p))
                       if f is not None]
        beat = (node.valid and node.fitness is not None and bool(parent_fits)
                and all(FITNESS.improves(node.fitness, f) for f in parent_fits))
        row: dict[str, Any] = {"node": node.id, "primary_parent": node.parent_id, "child_score": node.score,
               "parent_scores": parents, "valid": node.valid, "dead": node.dead, "beat_all_parents": beat}
        if operator == "merge":
            row["gene_sources"] = node.gene_sources
        rows.append(row)
    return rows


def run_summary(search: SearchRecord, best: Node, finalization: dict[str, Any]) -> dict[str, Any]:
    j = search.journal
    merges = offspring_report(j, "merge")
    mutations = offspring_report(j, "mutate")
    ops: dict[str, dict[str, int]] = {}
    for node in j.nodes:
        o = ops.setdefault(node.operator, {"nodes": 0, "valid": 0, "dead": 0})
        o["nodes"] += 1
        o["valid"] += int(node.valid)
        o["dead"] += int(node.dead)
    return {
        "strategy": "evolve",
        "nodes": len(j),
        "max_steps": search.cfg.max_steps,
        "valid_pool": len(j.valid_pool()),
        "dead": j.dead_count(),
        "buggy": sum(1 for n in j.nodes if n.is_buggy),
        "dead_rate": j.dead_rate(),
        "phase1": search.phase1_summary,
        "phase2": {"epochs": search.phase2_epochs, "stop_reason": search.stop_reason},
        "global_epochs": search.global_epoch,
        "profile_evolutions": search.profile_evolutions,
        "operators": ops,
        "merges": merges,
        "merges_beating_parents": sum(1 for m in merges if m["beat_all_parents"]),
        "mutations": mutations,
        "mutations_beating_parent": sum(1 for m in mutations if m["beat_all_parents"]),
        "best_node": node_row(best),
        "final_solution_id": finalization.get("final_solution_id"),
        "submission_path": finalization.get("submission_path", ""),
        "fallback_reason": finalization.get("fallback_reason"),
        "journal": [node_row(n) for n in j.nodes],
    }
