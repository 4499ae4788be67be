"""Builders for journals and simulated runs used across the evolution tests."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from events.domain import MetricDirection, PipelineConfig
from events.evolution import NodeAppended
from handlers.evolution import main
from handlers.evolution.genes import LOCI, parse_genes
from handlers.evolution.journal import Journal, project_journal
from tests.evolution.scripted import World, evaluate
from tests.support.sim import SimRun, make_task, simulate


def code_from(bodies: dict[str, str], preamble: str = "import os\n") -> str:
    return preamble + "".join(f"# [SECTION: {locus}]\n{bodies.get(locus, '# n/a')}\n" for locus in LOCI)


def add_node(journal: Journal, node_id: str, score: float | None, bodies: dict[str, str], *,
             operator: str = "draft", parents: Iterable[str] = (), valid: bool = True, dead: bool = False,
             buggy: bool = False, approach_tag: str | None = None, step: int | None = None):
    code = code_from(bodies)
    genes = parse_genes(code)
    parents = list(parents)
    event = NodeAppended(node_id=node_id, index=len(journal), step=len(journal) if step is None else step,
                         phase="draft" if operator == "draft" else "evolve", global_epoch=1, operator=operator,
                         profile=0, solution_id=f"sol-{node_id}", parents=parents,
                         primary_parent=parents[0] if parents else None,
                         gene_sources=dict.fromkeys(LOCI, node_id), gene_ids=genes.gene_ids(),
                         stub_loci=genes.stub_loci(), genes_valid=genes.valid, score=score, dead=dead,
                         is_buggy=buggy, valid=valid and not dead and not buggy, debug_attempts=0,
                         approach_tag=approach_tag)
    return journal.apply(event, code)


def long(text: str) -> str:
    """A non-stub gene body (at least 20 characters)."""
    return f"value = '{text}'  # a real gene body"


def config(**kw: Any) -> PipelineConfig:
    base = dict(max_steps=12, phase1_target_nodes=3, steps_per_epoch=3, workers=2, tournament_size=3)
    base.update(kw)
    return PipelineConfig(**base)


def run_world(world: World | None = None, *, direction: str = "maximize", order_seed: int | None = None,
              seed: int = 0, seconds_per_result: float = 1.0, **cfg: Any) -> tuple[SimRun, World]:
    world = world or World()
    # timers_last: the search's guard timer (at its deadline) fires only when nothing else is
    # pending, as a timer does in a real run; each result still advances the clock.
    run = simulate(main, agent=world, evaluate=evaluate, config=config(**cfg), task=make_task(direction),
                   seed=seed, order_seed=order_seed, seconds_per_result=seconds_per_result, timers_last=True)
    return run, world


def journal_of(run: SimRun, direction: str = "maximize") -> Journal:
    return project_journal(run.events, MetricDirection(direction))
