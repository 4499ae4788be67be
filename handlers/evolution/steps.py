"""One step of the search: decide its choices when it starts (recorded), then generate,
develop (execute, chained debug, review) and append exactly one node, dead or alive.

Choices are made from the journal as it is when the step starts, so with several workers in
flight the log's order of ``OperatorDrawn``/``TournamentHeld``/``GenePlanChosen``… is the order
the decisions were made in, and replay reproduces them exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from events.core import AgentCallCompleted, AgentCallRequested, SolutionEvaluated
from events.enums import SolutionPhase
from events.evolution import (
    DegenerationFixed,
    GenePlanChosen,
    NodeAppended,
    Operator,
    OperatorDrawn,
    PrimaryParentChosen,
    TargetLocusChosen,
    TournamentHeld,
)
from handlers.evolution.develop import DevelopedVersion, develop, usable_code
from handlers.evolution.genes import LOCI, parse_genes, select_non_stub_gene
from handlers.evolution.journal import Journal, Node
from handlers.evolution.prompts import draft_request, merge_request, mutate_request
from handlers.evolution.selection import (
    DegenerationFix,
    GeneItem,
    get_primary_parent,
    pheromone_with_degenerate_check,
    tournament_select,
)
from handlers.money import budget_stopped
from handlers.toolkit import info
from handlers.workflow import Workflow

Phase = Literal["draft", "evolve"]
SOLUTION_PHASE = {"draft": SolutionPhase.init, "merge": SolutionPhase.merged, "mutate": SolutionPhase.refined}


def node_id_of(step: int) -> str:
    return f"node-{step}"


@dataclass
class StepPlan:
    step: int
    phase: Phase
    global_epoch: int
    operator: Operator
    profile: int
    request: AgentCallRequested
    parents: list[str] = field(default_factory=list)        # node ids, primary first
    primary: str | None = None
    gene_sources: dict[str, str] = field(default_factory=dict)
    target_locus: str | None = None

    @property
    def node_id(self) -> str:
        return node_id_of(self.step)


def plan_step(wf: Workflow, journal: Journal, *, step: int, phase: Phase, global_epoch: int,
              profiles: list[str], merge_plans: dict[tuple[str, ...], str] | None = None) -> StepPlan:
    """Decide and record the step's operator and its inputs (synchronous: no effect awaited).

    ``merge_plans`` (gene-id signature -> node id of every merge planned so far) lets a merge
    whose plan would repeat an earlier merge's genes, or exactly the genes of an existing node,
    become a mutation instead: two workers starting from the same journal would otherwise
    spend two nodes of the budget on the same child. The switch is recorded with its reason.
    """
    cfg = wf.config
    profile = step % len(profiles)
    me = node_id_of(step)
    task_description = wf.start.task.description
    name = f"step-{step}"
    if phase == "draft":
        wf.record(OperatorDrawn(step=step, phase=phase, global_epoch=global_epoch, operator="draft",
                                profile=profile, reason="Phase 1 only drafts (no parent; plan §5)"))
        history = journal.draft_history()
        req = draft_request(wf.effect_id(f"{name}/draft"), task_description=task_description,
                            draft_history=history, profile=profiles[profile])
        return StepPlan(step, phase, global_epoch, "draft", profile, req,
                        gene_sources=dict.fromkeys(LOCI, me))

    draw = wf.rng(f"{name}/operator").random()
    operator: Operator = "merge" if draw < cfg.merge_ratio else "mutate"
    reason = f"draw {draw:.4f} {'<' if operator == 'merge' else '>='} merge_ratio {cfg.merge_ratio}"
    merge_plan = None
    if operator == "merge":
        merge_plan = pheromone_with_degenerate_check(journal)
        seen = merge_plans if merge_plans is not None else {}
        signature = plan_signature(merge_plan[0])
        repeats = seen.get(signature) or next(
            (n.id for n in journal.nodes if signature and tuple(n.event.gene_ids.get(lc, "") for lc in LOCI) == signature),
            None)
        if repeats is not None:
            operator, merge_plan = "mutate", None
            reason += f", but the merge plan repeats the genes of {repeats}: mutate instead"
        elif merge_plans is not None:
            merge_plans[signature] = me
    wf.record(OperatorDrawn(step=step, phase=phase, global_epoch=global_epoch, operator=operator, profile=profile,
                            draw=draw, merge_ratio=cfg.merge_ratio, reason=reason))
    if merge_plan is not None:
        return _plan_merge(wf, journal, merge_plan, step=step, global_epoch=global_epoch, profile=profile,
                           profiles=profiles)
    return _plan_mutate(wf, journal, step=step, global_epoch=global_epoch, profile=profile, profiles=profiles)


def plan_signature(plan: dict[str, GeneItem]) -> tuple[str, ...]:
    return tuple(plan[locus].gene_id for locus in LOCI) if len(plan) == len(LOCI) else ()


def _plan_merge(wf: Workflow, journal: Journal, chosen: tuple[dict[str, GeneItem], DegenerationFix | None], *,
                step: int, global_epoch: int, profile: int, profiles: list[str]) -> StepPlan:
    plan, fix = chosen
    if fix is not None:
        if fix.replaced:
            reason = f"all 7 genes came from {fix.dominant}; replaced {len(fix.replaced)} loci with the best gene of another node"
        else:
            reason = f"all 7 genes came from {fix.dominant} and no other node offers a gene; plan kept"
        wf.record(DegenerationFixed(step=step, dominant=fix.dominant, before=fix.before, after=fix.after,
                                    replaced=fix.replaced, kept=fix.kept, restored=fix.restored, reason=reason))
    sources = {locus: item.source for locus, item in plan.items()}
    wf.record(GenePlanChosen(step=step, plan={locus: plan[locus].describe() for locus in LOCI},
                             degenerate=fix is not None, pool_size=len(journal.valid_pool()),
                             sources=sorted(set(sources.values()))))
    primary, counts, tied, why = get_primary_parent(sources, journal)
    wf.record(PrimaryParentChosen(step=step, primary=primary, counts=counts, tied=tied, reason=why))
    parents = [primary] + [s for s in dict.fromkeys(sources[locus] for locus in LOCI) if s != primary]
    gene_plan = {locus: {"code": plan[locus].code, "source": plan[locus].source} for locus in LOCI}
    req = merge_request(wf.effect_id(f"step-{step}/merge"), task_description=wf.start.task.description,
                        primary_parent=primary, primary_code=journal.get(primary).code, gene_plan=gene_plan,
                        profile=profiles[profile])
    return StepPlan(step, "evolve", global_epoch, "merge", profile, req, parents=parents, primary=primary,
                    gene_sources=sources)


def _plan_mutate(wf: Workflow, journal: Journal, *, step: int, global_epoch: int, profile: int,
                 profiles: list[str]) -> StepPlan:
    pool = journal.valid_pool()
    winner, entrants = tournament_select(pool, wf.config.tournament_size, wf.rng(f"step-{step}/tournament"))
    wf.record(TournamentHeld(step=step, k=len(entrants), entrants=[e.id for e in entrants],
                             fitness={e.id: e.fitness for e in entrants if e.fitness is not None},
                             winner=winner.id, reason="highest fitness; ties to the older node"))
    locus, candidates, all_stubs = select_non_stub_gene(winner.genes, wf.rng(f"step-{step}/locus"))
    wf.record(TargetLocusChosen(step=step, parent=winner.id, locus=locus, candidates=candidates, all_stubs=all_stubs))
    me = node_id_of(step)
    req = mutate_request(wf.effect_id(f"step-{step}/mutate"), task_description=wf.start.task.description,
                         parent=winner.id, code=winner.code, target_locus=locus, profile=profiles[profile])
    return StepPlan(step, "evolve", global_epoch, "mutate", profile, req, parents=[winner.id], primary=winner.id,
                    gene_sources={lc: (me if lc == locus else winner.id) for lc in LOCI}, target_locus=locus)


async def run_step(wf: Workflow, journal: Journal, plan: StepPlan) -> Node | None:
    """Generate → develop → append the node (its journal index is the append order), under the
    workflow's deadline (the search's, ``Search.deadline``). A generation stopped for want of
    money appends none (the search stops on it)."""
    reply = await wf.agent(plan.request)
    if budget_stopped(reply):
        info(wf, f"step {plan.step}: no node, its {plan.operator} call was stopped by the budget",
             step=plan.step, error=getattr(reply, "error", ""))
        return None
    code = usable_code(reply)
    parent_solutions = [journal.get(p).event.solution_id or "" for p in plan.parents]
    detail: dict[str, Any] = {"step": plan.step, "node": plan.node_id, "operator": plan.operator,
                              "parents": plan.parents, "gene_sources": plan.gene_sources}
    outcome: DevelopedVersion | None = None
    if code is not None:
        outcome = await develop(wf, code, step=plan.step, phase=SOLUTION_PHASE[plan.operator], origin=plan.operator,
                                parent_solutions=[s for s in parent_solutions if s], detail=detail)
    return append_node(wf, journal, plan, outcome, reply)


def append_node(wf: Workflow, journal: Journal, plan: StepPlan, outcome: DevelopedVersion | None, reply: Any) -> Node:
    if outcome is None:
        why = reply.error if not isinstance(reply, AgentCallCompleted) else "the answer held no code"
        code, sid, genes_valid, gene_ids, stubs = "", None, False, {}, []
        dead, buggy, score, attempts, failure = True, False, None, 0, f"the {plan.operator} agent gave no code: {why}"
        tag, summary = None, ""
    else:
        v = outcome.version
        genes = parse_genes(v.code)
        code, sid, genes_valid, gene_ids, stubs = v.code, v.solution_id, genes.valid, genes.gene_ids(), genes.stub_loci()
        dead, buggy, attempts = outcome.dead, outcome.is_buggy, outcome.debug_attempts
        score = None if dead else v.score
        failure = v.error[:500] if dead else ("flagged buggy by review" if buggy else "")
        tag, summary = outcome.approach_tag, outcome.summary
    valid = not dead and not buggy and genes_valid and score is not None
    event = NodeAppended(node_id=plan.node_id, index=len(journal), step=plan.step, phase=plan.phase,
                         global_epoch=plan.global_epoch, operator=plan.operator, profile=plan.profile,
                         solution_id=sid, parents=plan.parents, primary_parent=plan.primary,
                         gene_sources=plan.gene_sources, gene_ids=gene_ids, stub_loci=stubs, genes_valid=genes_valid,
                         score=score, dead=dead, is_buggy=buggy, valid=valid, debug_attempts=attempts,
                         approach_tag=tag, summary=summary, failure=failure)
    wf.record(event)
    if sid is not None and outcome is not None:
        wf.record(SolutionEvaluated(solution_id=sid, requested_solution_id=outcome.first_solution_id,
                                    score=score if valid else None, is_executable=not dead, purpose="evolve"))
    submission = outcome.version.submission if outcome is not None and valid else None
    return journal.apply(event, code, submission)
