"""Properties of the finalization retry loop for any sequence of test-run outcomes
(REQ-FN-023/024/025): at most ``max_debug_attempts`` fixes, a submission exactly when a run
within the budget leaves a valid one, the validation fallback otherwise."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from events.core import EvaluationRequested
from events.phase3 import FinalizationFellBack, SubmissionProduced
from tests.finalization.scripted import VALIDATION, FinalAgent
from tests.finalization.test_finalization_acceptance import run

RUN = st.sampled_from(["valid", "error", "no_file", "invalid"])


@settings(max_examples=60, deadline=None)
@given(first=st.one_of(RUN, st.just("nocode")), fixes=st.lists(RUN, max_size=5),
       max_debug=st.integers(1, 4))
def test_REQ_FN_023_024_025_any_outcome_sequence(first, fixes, max_debug):
    agent = FinalAgent(test_outcome=first, fixes=fixes)
    sim, out = run(agent, max_debug=max_debug)
    runs = [first] + fixes
    budget = min(max_debug, len(fixes))          # fixes the debugger can actually deliver
    valid_at = next((i for i, o in enumerate(runs) if o == "valid"), None)
    succeeded = valid_at is not None and valid_at <= budget
    debugger_calls = len(agent.of("debugger"))
    assert debugger_calls <= max_debug
    if succeeded:
        assert debugger_calls == valid_at
        assert len(sim.of(EvaluationRequested)) == valid_at + 1
        assert out.submission_path and out.fallback_reason is None
        assert len(sim.of(SubmissionProduced)) == 1 and sim.of(FinalizationFellBack) == []
    else:
        assert debugger_calls == min(max_debug, len(fixes) + 1)
        assert len(sim.of(EvaluationRequested)) == budget + 1
        assert out.submission_path == "" and out.final_solution.content == VALIDATION
        assert len(sim.of(FinalizationFellBack)) == 1 and sim.of(SubmissionProduced) == []
