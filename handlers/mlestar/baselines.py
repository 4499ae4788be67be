"""Baseline strategies: how much do refinement and ensembling earn over simpler searches?

``best_candidate`` runs Phase 1's drafting only (retrieve M models, draft and evaluate each),
takes the best single candidate — no merging, no refinement, no ensembling — and turns it into
a submission with the same finalization as the full pipeline. Comparing its graded test score
with ``mle-star``'s on the same task and seed is the honest measure of what the later phases add.
"""

from __future__ import annotations

from events.core import PhaseCompleted, PhaseStarted
from events.errors import PipelineError
from handlers.finalization import run_finalization
from handlers.mlestar.phase1 import generate_candidate, rank_candidates, retrieve_models
from handlers.toolkit import score_rule
from handlers.workflow import Workflow


async def best_candidate(wf: Workflow) -> None:
    p1 = wf.at("phase1")
    p1.record(PhaseStarted(phase="phase1"))
    models = await retrieve_models(p1, wf.config.num_retrieved_models)
    evaluated = await p1.gather(*(generate_candidate(p1, i, m) for i, m in enumerate(models)))
    scores = [ev.score if ev.ok else None for ev in evaluated]
    ranked = rank_candidates(scores, score_rule(wf))
    if not ranked:
        raise PipelineError(f"all {len(models)} candidates produced execution errors")
    best = evaluated[ranked[0]]
    p1.record(PhaseCompleted(phase="phase1", result={"best_candidate": ranked[0], "score": best.score,
                                                     "candidate_scores": scores}))
    outcome = await run_finalization(wf, best.solution, best.score)
    wf.complete(submission_path=outcome.submission_path, best_score=best.score,
                result={"best_candidate": ranked[0], "model_name": models[ranked[0]].model_name,
                        "validation_score": best.score, "final_solution_id": outcome.final_solution_id})
