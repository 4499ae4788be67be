"""Properties of Algorithm 3 for any score sequence and any failure pattern (REQ-P3-024/025/
026/032/033/034/035)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from events.domain import MetricDirection
from events.phase3 import EnsembleRoundCompleted
from events.score import Score
from handlers.mlestar.phase3 import PLANNER_FAILED, best_index
from tests.phase3.scripted import Phase3Agent, ensemble_code, input_solutions, plan_text
from tests.phase3.test_phase3_acceptance import run

scores_st = st.lists(st.one_of(st.none(), st.sampled_from([0.1, 0.5, 0.7, 0.9]),
                               st.floats(-1e6, 1e6, allow_nan=False)), max_size=12)


def reference_best(scores: list[float | None], maximize: bool) -> int | None:
    usable = [(s, i) for i, s in enumerate(scores) if s is not None]
    if not usable:
        return None
    target = max(s for s, _ in usable) if maximize else min(s for s, _ in usable)
    return max(i for s, i in usable if s == target)   # the last of equal bests


@given(scores_st, st.booleans())
def test_REQ_P3_025_best_index_is_last_argbest(scores, maximize):
    direction = MetricDirection.maximize if maximize else MetricDirection.minimize
    assert best_index(scores, Score(direction)) == reference_best(scores, maximize)


def test_REQ_P3_025_nan_never_wins():
    assert best_index([float("nan"), 0.3, float("nan")], Score(MetricDirection.maximize)) == 1
    assert best_index([float("nan")], Score(MetricDirection.minimize)) is None


OUTCOMES = st.one_of(
    st.sampled_from([0.6, 0.7, 0.8]),
    st.sampled_from([None, "planner_fail", "planner_empty", "ensembler_fail", "ensembler_empty", "unfixable"]),
    st.sampled_from([("fixable", 0.75), ("fixable", 0.8)]),
)


def expected_score(outcome: Any) -> float | None:
    if isinstance(outcome, float):
        return outcome
    if isinstance(outcome, tuple):
        return outcome[1]
    return None


@settings(max_examples=40, deadline=None)
@given(st.lists(OUTCOMES, min_size=1, max_size=6), st.booleans())
def test_REQ_P3_032_034_exactly_R_attempts_for_any_failure_pattern(outcomes, maximize):
    R = len(outcomes)
    agent = Phase3Agent(dict(enumerate(outcomes)))
    inputs = input_solutions([0.65, 0.7])
    sim, res = run(agent, inputs, R=R, direction="maximize" if maximize else "minimize", max_debug=1)
    assert sim.failed is None
    want = [expected_score(o) for o in outcomes]
    assert res.ensemble_scores == want
    assert len(res.attempts) == len(res.ensemble_plans) == R
    assert [e.round for e in sim.of(EnsembleRoundCompleted)] == list(range(R))
    for r, (o, a) in enumerate(zip(outcomes, res.attempts)):
        assert a.plan == (PLANNER_FAILED if o in ("planner_fail", "planner_empty") else plan_text(r))
        if o in ("planner_fail", "planner_empty", "ensembler_fail", "ensembler_empty"):
            assert a.solution.content == ""
    # Every planner call saw exactly the rounds before it (REQ-P3-023).
    for r, call in enumerate(agent.of("ens_planner")):
        assert call.variables["plans"] == res.ensemble_plans[:r]
        assert call.variables["scores"] == res.ensemble_scores[:r]
    r_star = reference_best(want, maximize)
    assert res.best_round == r_star
    if r_star is None:   # REQ-P3-026: the best input (0.7 when maximizing, 0.65 when minimizing)
        assert res.best_ensemble.content == inputs[1 if maximize else 0].content
    else:
        assert res.best_ensemble.content.startswith(ensemble_code(r_star, 0.0).splitlines()[0])
    assert res.best_ensemble_score == res.best_ensemble.score   # REQ-P3-035


@settings(max_examples=10, deadline=None)
@given(st.lists(OUTCOMES, min_size=2, max_size=4))
def test_decisions_are_replayable(outcomes):
    """Two runs of the same inputs decide exactly the same events (replay relies on it)."""
    a, _ = run(Phase3Agent(dict(enumerate(outcomes))), R=len(outcomes))
    b, _ = run(Phase3Agent(dict(enumerate(outcomes))), R=len(outcomes))
    assert a.decisions() == b.decisions()
