"""The final is the best solution on validation among Phase 3's ensembles and its inputs, by one
rule whether Phase 3 completed, failed or was cut (REQ-OR-043 over REQ-P3-025; docs/decisions/0001-final-choice.md).
Ties go to the ensemble (the later candidate, ``Ties.LATER_WINS``, REQ-DM-029)."""

from __future__ import annotations

from typing import Any

import pytest

from events.core import AgentCallRequested, PhaseCompleted, PhaseStarted, SolutionEvaluated
from events.domain import (
    EnsembleAttempt,
    FinalResult,
    Phase2Result,
    Phase3Result,
    PipelineConfig,
    PipelineError,
    SolutionPhase,
    SolutionScript,
)
from events.pipeline import DeadlineHit, FallbackUsed, WorkCut
from events.score import Score
from handlers.mlestar.finalchoice import choose_final
from handlers.workflow import Workflow
from replay.state import fold
from tests.pipeline.support import Script
from tests.replays.fixtures import HERE, read_fixture

PATHS = (0.6, 0.65)   # each path's own best: path-1 is the best input


def solution(score: float | None, tag: str) -> SolutionScript:
    return SolutionScript(content=f"# {tag}\n", phase=SolutionPhase.refined, score=score)


# --- the rule ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("pick", "wins"), [(0.6, "path-1"), (0.65, "ensemble"), (0.7, "ensemble"),
                                            (None, "path-1")])
def test_REQ_OR_043_the_final_is_the_best_of_the_inputs_and_the_ensemble(pick: float | None, wins: str) -> None:
    inputs = [solution(0.6, "path-0"), solution(0.65, "path-1")]
    ensemble = None if pick is None else solution(pick, "ensemble")
    final = choose_final(Score.of("maximize"), inputs, ensemble, pick)
    assert final.solution.content == f"# {wins}\n"
    assert final.score == max(0.65, pick or 0.0)
    assert final.from_phase3 == (wins == "ensemble")
    assert final.input_index == (None if wins == "ensemble" else 1)


def test_the_final_rule_follows_the_metric_direction_and_equal_inputs_keep_the_later() -> None:
    rule = Score.of("minimize")
    inputs = [solution(0.3, "path-0"), solution(0.2, "path-1"), solution(0.2, "path-2")]
    assert choose_final(rule, inputs, solution(0.25, "ensemble"), 0.25).input_index == 2
    assert choose_final(rule, inputs, solution(0.1, "ensemble"), 0.1).from_phase3
    assert choose_final(rule, inputs, solution(float("nan"), "ensemble"), float("nan")).input_index == 2


def test_no_scored_candidate_is_a_clear_pipeline_error() -> None:
    with pytest.raises(PipelineError, match="no candidate"):
        choose_final(Score.of("maximize"), [solution(None, "path-0")], None, None)


# --- the pipeline, whatever Phase 3's ending -------------------------------------------------------


class EnsembleScript(Script):
    """Paths with their own scores (``PATHS``); a Phase 3 that scores one ensemble round (handed to
    the pipeline through ``sink``, as ``run_phase3`` does), then completes, fails or runs on until
    its deadline cuts it."""

    def __init__(self, mode: str, ensemble: float) -> None:
        super().__init__()
        self.mode, self.ensemble = mode, ensemble

    async def _scored(self, wf: Workflow, code: str, phase: SolutionPhase, purpose: str) -> float | None:
        sid = wf.record_solution(code, phase=phase, origin=purpose)
        done = await wf.evaluate(sid, name="eval", purpose=purpose, timeout_s=30)
        wf.record(SolutionEvaluated(solution_id=sid, requested_solution_id=sid, score=done.result.score,
                                    is_executable=not done.result.is_error, purpose=purpose))
        return done.result.score

    async def phase2(self, wf: Workflow, s0: SolutionScript, h0: float, *,
                     sink: Any = None, unmerged: Any = ()) -> list[Phase2Result]:
        async def path(i: int) -> Phase2Result:
            code = f"# path-{i}\n# score={PATHS[i]}\n"
            score = await self._scored(wf.at(f"phase2/path-{i}"), code, SolutionPhase.refined, "phase2")
            assert score is not None
            return Phase2Result(ablation_summaries=[], refined_blocks=[], step_history=[], best_score=score,
                                best_solution=SolutionScript(content=code, phase=SolutionPhase.refined, score=score))

        return await wf.gather(*(path(i) for i in range(len(PATHS))))

    async def phase3(self, wf: Workflow, solutions: list[SolutionScript], *,
                     sink: Any = None) -> Phase3Result:
        self.seen["phase3"] = {"solutions": solutions}
        w = wf.at("phase3")
        w.record(PhaseStarted(phase="phase3"))
        code = f"# ensemble\n# score={self.ensemble}\n"
        score = await self._scored(w, code, SolutionPhase.ensemble, "ensemble")
        ensemble = SolutionScript(content=code, phase=SolutionPhase.ensemble, score=score)
        sink.append(EnsembleAttempt(plan="average", score=score, solution=ensemble))
        if self.mode == "failed":
            raise RuntimeError("phase3 broke after its first round")
        if self.mode == "cut":
            for k in range(1000):
                await w.agent(AgentCallRequested(effect_id=w.effect_id(f"round-1/{k}"), agent_type="coder",
                                                 prompt="more"))
        w.record(PhaseCompleted(phase="phase3"))
        assert score is not None
        return Phase3Result(input_solutions=solutions, ensemble_plans=["average"], ensemble_scores=[score],
                            best_ensemble=ensemble, best_ensemble_score=score)


@pytest.mark.parametrize("mode", ["completed", "failed", "cut"])
@pytest.mark.parametrize("ensemble", [0.62, 0.65, 0.7])
def test_REQ_OR_043_one_rule_for_the_final_whether_phase3_completed_failed_or_was_cut(
        mode: str, ensemble: float) -> None:
    script = EnsembleScript(mode, ensemble)
    run = script.run(PipelineConfig(time_limit_seconds=3600, num_parallel_solutions=len(PATHS)))
    assert run.failed is None and run.completed is not None
    assert [s.score for s in script.seen["phase3"]["solutions"]] == list(PATHS)

    ensemble_wins = ensemble >= max(PATHS)          # a tie goes to the ensemble
    expected = max(ensemble, *PATHS)
    handed = script.seen["finalization"]
    assert handed["score"] == expected and run.completed.best_score == expected
    assert handed["solution"].content.startswith("# ensemble" if ensemble_wins else "# path-1")
    assert run.completed.result["best_validation_score"] == expected

    result = FinalResult.model_validate(run.completed.result)
    assert (result.phase3 is not None) == (mode == "completed")
    fallbacks = [f for f in run.of(FallbackUsed) if f.phase == "phase3"]
    if mode == "completed" and ensemble_wins:       # Phase 3's own pick: nothing stands in for it
        assert fallbacks == []
    else:
        assert len(fallbacks) == 1 and fallbacks[0].score == expected
        assert fallbacks[0].detail["status"] == {"completed": "completed", "failed": "failed",
                                                 "cut": "timed_out"}[mode]
        assert ("best round" if ensemble_wins else "path-1's best") in fallbacks[0].reason
    cuts = [c for c in run.of(WorkCut) if c.unit == "phase3"]
    assert [h.phase for h in run.of(DeadlineHit)] == (["phase3"] if mode == "cut" else [])
    assert [c.kept_score for c in cuts] == ([expected] if mode == "cut" else [])


# --- what the run shows ------------------------------------------------------------------------------


@pytest.mark.parametrize(("recorded", "shows_recorded"), [(0.9, True), (None, False), (float("nan"), False)])
def test_status_shows_the_submitted_solution_s_score_once_the_run_completed(recorded: float | None,
                                                                           shows_recorded: bool) -> None:
    """``engine status``'s best score is the final's validation score (``RunCompleted.best_score``),
    not the best ever evaluated, when the two differ; before completion, or when the final carries
    no usable score, it is the best evaluated so far (``replay.best``)."""
    envelopes = read_fixture(HERE / "mle-star-wine-builtin.jsonl")
    last = envelopes[-1]
    assert last.type == "RunCompleted"
    best = last.payload["best_score"]
    assert best is not None and best != recorded
    running = fold(envelopes[:-1])
    assert running.best_score == running.best_score_so_far == best
    done = fold([last.model_copy(update={"payload": {**last.payload, "best_score": recorded}})], running)
    assert done.best_score_so_far == best
    shown = recorded if shows_recorded else best
    assert done.best_score == shown and done.summary()["best_score"] == shown
