"""Where the noise margin decides: Phase 1's merges (REQ-P1-025/026) and Phase 2's inner steps
(REQ-P2I-025/026) replace their incumbent only on a win beyond the validation noise when the run
asks for a margin (``PipelineConfig.noise_margin_se``, the time preset's 1) and both scripts
printed their group values; with no margin (the paper's and quick presets) or no groups, the
paper's ``>=`` alone, as before (``events.score.Score.clears_noise``).

The evaluators stand in for the harness: they answer with an ``EvaluationCompleted`` carrying
``score_groups`` as ``engine.harness`` reads them off a script's ``Validation Score Groups:`` line.
"""

from __future__ import annotations

import re

from events.core import EvaluationCompleted, EvaluationRequested
from events.domain import CodeBlock, PipelineConfig, SolutionPhase, SolutionScript
from events.phase1 import MergeDecided
from handlers.evaluation import EvalPolicy, evaluate_with_retry
from handlers.mlestar.phase1 import phase1_only
from handlers.mlestar.phase2_inner import run_phase2_inner_loop
from tests.phase1.scripted import Phase1Agent, evaluate_script
from tests.phase2.helpers import BASE, BLOCK, Agents, config, where
from tests.phase2.helpers import evaluate as evaluate_marked
from tests.support.sim import make_task, simulate

GROUPS = 16
SPREAD = 0.05   # each group of a "noisy" script off its score by this much, alternately up and down


def steady(score: float) -> tuple[float, ...]:
    return (score,) * GROUPS


def noisy(score: float, turn: int = 0) -> tuple[float, ...]:
    """Off by SPREAD alternately up and down; ``turn`` 1 starts down, so two noisy scripts of
    different turns differ by 2 × SPREAD group by group."""
    up, down = score + SPREAD, score - SPREAD
    return ((up, down) if turn % 2 == 0 else (down, up)) * (GROUPS // 2)


def with_groups(done: EvaluationCompleted | object, groups: tuple[float, ...] | None) -> EvaluationCompleted:
    assert isinstance(done, EvaluationCompleted)
    return done.model_copy(update={"score_groups": groups})


# --- Phase 2's inner loop -------------------------------------------------------------------------


def run_inner(scores: list[float], margin: float, *, groups_for_k: dict[int, str]) -> list[bool]:
    """The inner loop from BASE (scored 0.80 on steady groups) over K=len(scores) attempts;
    ``groups_for_k[k]``: "steady", "noisy" or "none" (the script printed no groups)."""
    seen: dict = {}

    def evaluate(req: EvaluationRequested, code: str) -> EvaluationCompleted:
        done = EvaluationCompleted(effect_id=req.effect_id, result=evaluate_marked(req, code))
        if "/base/" in req.effect_id:
            return with_groups(done, steady(0.80))
        k = where(req)[2]
        assert k is not None and done.result.score is not None
        kind = groups_for_k.get(k, "steady")
        return with_groups(done, None if kind == "none" else noisy(done.result.score) if kind == "noisy"
                           else steady(done.result.score))

    async def main(wf):
        s0 = SolutionScript(content=BASE, phase=SolutionPhase.merged)
        base = await evaluate_with_retry(wf, s0, EvalPolicy.scored("refinement", 60), name="base", origin="test")
        res = await run_phase2_inner_loop(wf.at("phase2/path-0"), base.solution, CodeBlock(content=BLOCK, outer_step=0),
                                          "p0", base.score)
        seen["res"] = res
        wf.complete(submission_path="", best_score=res.best_score, result={})

    agents = Agents(score=lambda p, t, k: scores[k])
    sim = simulate(main, agent=agents, evaluate=evaluate, config=config(K=len(scores), noise_margin_se=margin),
                   task=make_task())
    assert sim.failed is None, sim.failed
    return [a.was_improvement for a in seen["res"].attempts]


def test_REQ_P2I_025_a_step_within_the_noise_keeps_the_incumbent_under_a_margin() -> None:
    """k0 wins by 0.05 on every group; k1 by 0.001 overall, its groups ±0.05 around it (a
    standard error near 0.013); k2 by 0.01 on every group."""
    scores = [0.85, 0.851, 0.86]
    assert run_inner(scores, 1.0, groups_for_k={1: "noisy"}) == [True, False, True]
    # No margin: the paper's >= takes every one of them.
    assert run_inner(scores, 0.0, groups_for_k={1: "noisy"}) == [True, True, True]


def test_REQ_P2I_026_without_groups_the_papers_rule_decides_even_under_a_margin() -> None:
    """A script that printed no groups (an LLM's, say) has no measured noise: ``>=`` decides, for
    it (k1's 0.001 is taken) and against it as the incumbent (k2 ties it and moves on)."""
    assert run_inner([0.85, 0.851, 0.851, 0.8505], 1.0, groups_for_k={1: "none"}) == [True, True, True, False]


def test_REQ_P2I_026_a_tie_on_the_same_groups_no_longer_moves_on_under_a_margin() -> None:
    assert run_inner([0.85, 0.85], 1.0, groups_for_k={}) == [True, False]
    assert run_inner([0.85, 0.85], 0.0, groups_for_k={}) == [True, True]


# --- Phase 1's merges -----------------------------------------------------------------------------


def run_phase1(candidates: list[float], merges: list[float], margin: float) -> list[MergeDecided]:
    """Drafts print steady groups; merged scripts noisy ones (SPREAD around their score, merge n
    in turn n)."""
    def evaluate(req: EvaluationRequested, code: str) -> EvaluationCompleted:
        done = EvaluationCompleted(effect_id=req.effect_id, result=evaluate_script(req, code))
        score = done.result.score
        if score is None:
            return done
        merge = re.search(r"/merge-(\d+)/", req.effect_id)
        return with_groups(done, noisy(score, int(merge.group(1))) if merge else steady(score))

    cfg = PipelineConfig(num_retrieved_models=len(candidates), max_debug_attempts=1, noise_margin_se=margin)
    sim = simulate(phase1_only, agent=Phase1Agent(candidates, merges), evaluate=evaluate, config=cfg,
                   task=make_task("maximize"))
    assert sim.failed is None, sim.failed
    return sim.of(MergeDecided)


def test_REQ_P1_025_a_merge_better_by_less_than_the_noise_ends_the_merging() -> None:
    decided = run_phase1([0.9, 0.85, 0.8], [0.905, 0.95], 1.0)
    assert [m.accepted for m in decided] == [False]
    assert decided[0].reason == "better by less than the validation noise" and decided[0].best == 0.9


def test_REQ_P1_026_a_merge_beyond_the_noise_is_taken() -> None:
    """0.95 against 0.90: a gain of 0.05 against a standard error near 0.013; then 0.951 against
    0.95, its groups off the first merge's by ±0.1: a standard error near 0.026."""
    decided = run_phase1([0.9, 0.85, 0.8], [0.95, 0.951], 1.0)
    assert [m.accepted for m in decided] == [True, False]
    # Without a margin the second merge's 0.001 is taken, as the paper's >= takes it.
    assert [m.accepted for m in run_phase1([0.9, 0.85, 0.8], [0.95, 0.951], 0.0)] == [True, True]
