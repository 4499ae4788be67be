"""Phase 1's drafts are asked to fit the most their phase waits for them (docs/decisions/0032).

Phase 1 waits for the retriever's first choice up to FIRST_CHOICE_WAIT of its windows past its
end (decision 0014) and cuts it there. Its evaluations are told that point
(``EvaluationRequested.fit_within_s``, which the harness passes as ``ENGINE_EVAL_FIT_BY``) so a
draft can size its work to it; they are still killed only at their timeout. No other phase's
evaluation is told anything new, and a run recorded before the change is resumed the old way.

The real handlers run on the in-memory simulator's timed completion policy.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from events.base import load_event
from events.core import EvaluationRequested, RunStarted
from events.pipeline import PhaseBudgetAllocated
from handlers.deadline import MIN_START_S, Deadline
from handlers.mlestar.pipeline import DRAFTS_SIZED_TO_WINDOW, FIRST_CHOICE_WAIT, main
from tests.pipeline import scripted_agent as sa
from tests.pipeline.test_phase1_extension import config
from tests.support.sim import simulate_clock


def _run(patches: list[str] | None = None):
    def durations(req):
        return 150.0 if req.effect_id == "phase1/candidate-0/eval" else 1.0

    return simulate_clock(main, agent=sa.answer, evaluate=sa.evaluate, config=config(2), durations=durations,
                          patches=patches)


def test_phase1_drafts_are_asked_to_fit_the_first_choices_wait_and_no_one_else():
    sim = _run()
    window = next(e for e in sim.of(PhaseBudgetAllocated) if e.phase == "phase1")
    fit_by = window.deadline_s + FIRST_CHOICE_WAIT * window.budget_s
    drafts = [r for r in sim.of(EvaluationRequested) if r.effect_id.startswith("phase1/candidate-")]
    assert len(drafts) == 2
    for request in drafts:
        # asked at the start of the run (driven second ~1): the rest of the wait
        assert request.fit_within_s is not None and request.fit_within_s < request.timeout_s
        assert fit_by - 5.0 < request.fit_within_s <= fit_by
    later = [r for r in sim.of(EvaluationRequested) if not r.effect_id.startswith("phase1/")]
    assert later and all(r.fit_within_s is None for r in later)


def test_a_run_recorded_before_the_change_asks_nothing_new():
    sim = _run(patches=[])
    assert all(r.fit_within_s is None for r in sim.of(EvaluationRequested))
    (started,) = sim.of(RunStarted)
    assert DRAFTS_SIZED_TO_WINDOW not in started.patches


def test_a_v2_evaluation_request_loads_unasked():
    payload = {"effect_id": "phase1/candidate-0/eval", "solution_id": "abc", "purpose": "candidate",
               "timeout_s": 96.0, "expect_submission": True, "cores": 1}
    event = load_event("EvaluationRequested", 2, payload)
    assert isinstance(event, EvaluationRequested) and event.fit_within_s is None


def test_a_request_cannot_ask_for_no_time():
    with pytest.raises(ValueError):
        EvaluationRequested(effect_id="phase1/candidate-0/eval", solution_id="abc", purpose="candidate",
                            timeout_s=10.0, fit_within_s=0.0)


@given(now=st.floats(0, 1000), fit_s=st.none() | st.floats(0, 2000), timeout_s=st.floats(1, 1000))
def test_the_window_asked_for_is_sooner_than_the_timeout_and_still_ahead(now, fit_s, timeout_s):
    asked = Deadline(None, None, fit_s).fit_within(now, timeout_s)
    if fit_s is None or fit_s - now >= timeout_s or fit_s - now < MIN_START_S:
        assert asked is None
    else:
        assert asked == fit_s - now


def test_narrowing_keeps_the_sooner_window():
    assert Deadline(10.0, 20.0, 15.0).narrowed(12.0, 18.0, 16.0) == Deadline(10.0, 18.0, 15.0)
    assert Deadline(10.0, 20.0).narrowed(fit_s=16.0).fit_s == 16.0
