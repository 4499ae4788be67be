"""In the time mode a final whose test run cannot end in the time left gives way to the best that
can (docs/decisions/0039-final-fits-its-test-run.md): a test run the limit cuts leaves the
submission the search's run wrote, fit on its sample of the rows."""

from __future__ import annotations

from typing import Any

from events.core import (
    AgentCallCompleted,
    AgentCallRequested,
    EffectCancelled,
    EvaluationCompleted,
    EvaluationRequested,
    Note,
)
from events.domain import EnsembleAttempt, SolutionPhase, SolutionScript
from events.pipeline import FallbackUsed
from events.score import Score
from handlers.mlestar.finalchoice import FINAL_FITS_ITS_TEST_RUN, choose_final, why_kept
from handlers.mlestar.pipeline import main as mle_star_main
from handlers.patches import adopted_by_new_runs
from tests.pipeline import scripted_agent as sa
from tests.pipeline.test_time_driven import distinct, time_config
from tests.support.sim import SimRun, simulate_clock


def solution(score: float | None, tag: str) -> SolutionScript:
    return SolutionScript(content=f"# {tag}\n", phase=SolutionPhase.refined, score=score)


# --- the rule ------------------------------------------------------------------------------------


def test_a_best_that_cannot_be_finalized_in_time_gives_way_to_the_best_that_can() -> None:
    rule = Score.of("maximize")
    inputs = [solution(0.60, "path-0"), solution(0.65, "path-1")]
    rounds = [EnsembleAttempt(plan=f"round {r}", score=s, solution=solution(s, f"round-{r}"))
              for r, s in enumerate((0.66, 0.70))]
    slow = {"# round-1\n", "# path-1\n"}

    def fits(s: SolutionScript) -> bool:
        return s.content not in slow

    final = choose_final(rule, inputs, rounds[1].solution, 0.70, affordable=fits, rounds=rounds)
    assert final.solution.content == "# round-0\n" and final.score == 0.66       # the best round that fits
    assert final.from_phase3 and final.input_index is None
    assert final.passed_over is not None and final.passed_over.content == "# round-1\n"
    assert "whose test run ends in the time left" in why_kept(final, "completed")

    no_round_fits = choose_final(rule, inputs, rounds[1].solution, 0.70, affordable=lambda s: "path-0" in s.content,
                                 rounds=rounds)
    assert no_round_fits.solution.content == "# path-0\n" and no_round_fits.input_index == 0

    # Nothing fits: the plain choice, which the measurement cannot improve on.
    assert choose_final(rule, inputs, rounds[1].solution, 0.70, affordable=lambda s: False,
                        rounds=rounds).passed_over is None
    # A best that fits is the final whatever else does not.
    kept = choose_final(rule, inputs, rounds[1].solution, 0.70, affordable=lambda s: s.content == "# round-1\n",
                        rounds=rounds)
    assert kept.solution.content == "# round-1\n" and kept.passed_over is None
    # Without the rule (fixed step counts, runs recorded before it) the best on validation.
    assert choose_final(rule, inputs, rounds[1].solution, 0.70, rounds=rounds).solution.content == "# round-1\n"


def test_the_reasons_without_the_rule_are_worded_as_before() -> None:
    """Recorded runs carry these words; a run that passes nothing over says what it always said."""
    rule = Score.of("maximize")
    final = choose_final(rule, [solution(0.6, "path-0"), solution(0.7, "path-1")], solution(0.65, "e"), 0.65)
    assert why_kept(final, "completed") == ("Phase 3 completed: path-1's best (no ensemble beat it) used, "
                                            "the best solution on validation (REQ-OR-043)")
    assert why_kept(final, "timed_out") == "Phase 3 timed out: path-1's best (no ensemble beat it) used (REQ-OR-030)"


# --- a run ---------------------------------------------------------------------------------------

ENSEMBLE = "score = 0.90"      # every scripted ensemble's script (and its test version's)
ENSEMBLE_TEST_RUN_S = 400.0    # what the ensemble's test version takes and estimates: past any limit here
OTHER_TEST_RUN_S = 4.0


def _run(patches: list[str]) -> tuple[SimRun, list[str]]:
    """A 300 s time-mode run of the scripted agent, whose ensembles score best but whose test
    version takes (and is estimated at) 400 s; every other script's, 4 s. Returns the run and the
    scripts finalization's test role was asked for, in order."""
    finalized: list[str] = []

    def agent(req: AgentCallRequested) -> AgentCallCompleted:
        if req.agent_type == "test" and req.variant in (None, "", "test"):
            finalized.append("ensemble" if ENSEMBLE in req.prompt else "path")
        return distinct(req)

    def took(req: Any) -> float | None:
        if isinstance(req, AgentCallRequested):
            return 0.2
        if isinstance(req, EvaluationRequested):
            if req.effect_id.startswith("final/"):
                # A run past the limit is cut by finalization's guard timer, as the real driver's is.
                return ENSEMBLE_TEST_RUN_S if finalized and finalized[-1] == "ensemble" else OTHER_TEST_RUN_S
            return 3.0
        return None

    def evaluate(req: EvaluationRequested, code: str) -> EvaluationCompleted:
        done = sa.evaluate(req, code)
        if req.effect_id.startswith("final/") or done.result.score is None:
            return done
        estimate = ENSEMBLE_TEST_RUN_S if ENSEMBLE in code else OTHER_TEST_RUN_S
        return done.model_copy(update={"result": done.result.model_copy(update={"duration_seconds": 3.0}),
                                       "final_run_estimate_s": estimate})

    run = simulate_clock(mle_star_main, agent=agent, evaluate=evaluate, config=time_config(300), durations=took,
                         max_steps=400_000, patches=patches)
    assert run.completed is not None, run.failed
    return run, finalized


def test_a_run_finalizes_the_best_whose_test_run_ends_in_time_and_submits_its_fit_on_every_row() -> None:
    assert FINAL_FITS_ITS_TEST_RUN in adopted_by_new_runs()
    run, finalized = _run(adopted_by_new_runs())
    done = run.completed
    assert done is not None
    assert any(e.result.score == 0.9 for e in run.of(EvaluationCompleted) if e.effect_id.startswith("phase3/"))
    assert finalized == ["path"]                         # the best ensemble was never finalized
    (passed,) = [n for n in run.of(Note) if n.message.startswith("the best on validation is passed over")]
    assert passed.data["its_score"] == 0.9 and passed.data["its_need_s"] > passed.data["left_s"]
    (fallback,) = [f for f in run.of(FallbackUsed) if f.phase == "phase3"]
    assert "whose test run ends in the time left" in fallback.reason and fallback.score == done.best_score < 0.9
    assert done.result["finalization"]["fallback_reason"] == ""          # the test version ran to its end
    assert not [e for e in run.of(EffectCancelled) if e.effect_id.startswith("final/")]


def test_a_run_recorded_before_the_rule_keeps_finalizing_the_best_on_validation() -> None:
    """The decision is named (handlers/patches.py): a run that did not adopt it finalizes the
    ensemble as it did, whose test run the limit cuts, and submits the search run's own file."""
    run, finalized = _run([p for p in adopted_by_new_runs() if p != FINAL_FITS_ITS_TEST_RUN])
    done = run.completed
    assert done is not None
    assert finalized == ["ensemble"] and done.best_score == 0.9
    assert not [n for n in run.of(Note) if n.message.startswith("the best on validation is passed over")]
    assert done.result["finalization"]["fallback_reason"].startswith("finalization timed_out")
    assert [e for e in run.of(EffectCancelled) if e.effect_id.startswith("final/test")]
