"""Completion order does not change the outcome (issue "Replay-based regression suite", item 6;
ARCHITECTURE "Concurrency: the recorded completion order is one valid linearisation").

A recorded MLE-STAR run is re-run IN MEMORY with the replay backend's idea: every agent call is
answered with the recorded ``AgentCallCompleted``/``AgentCallFailed`` of the same effect id and
every evaluation with the recorded ``EvaluationCompleted``, but results are delivered in a random
order chosen by hypothesis (``tests.support.sim.simulate(order_seed=...)``, timers only when nothing
else is pending, as with a real 24 h limit). The run must ask only for effects the recording has
and end with the recorded ``RunCompleted``: the same FinalResult, up to the fields that measure
driven time (per-phase durations), which depend on the clock and not on any decision, and the
last bits of float cost sums (see ``timeless``).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from events.core import AgentCallRequested, EvaluationRequested, RunStarted
from handlers.mlestar.pipeline import main as mle_star
from tests.replays.fixtures import FIXTURES, read_fixture
from tests.support.sim import simulate

MLE_STAR = [f for f in FIXTURES if f.strategy == "mle-star"]


class Recorded:
    def __init__(self, name: str) -> None:
        spec = next(f for f in FIXTURES if f.name == name)
        log = read_fixture(spec.path)
        self.start = log[0].event()
        assert isinstance(self.start, RunStarted)
        self.answers = {e.payload["effect_id"]: e.event() for e in log
                        if e.type in ("AgentCallCompleted", "AgentCallFailed")}
        self.evaluations = {e.payload["effect_id"]: e.event() for e in log if e.type == "EvaluationCompleted"}
        self.completed = next(e.payload for e in log if e.type == "RunCompleted")
        # Spend outside any call (the start-up check) counts in the run's money like any other.
        self.preamble = [e.event() for e in log if e.type == "AgentSpendRecorded" and e.payload["effect_id"] is None]

    def agent(self, request: AgentCallRequested) -> Any:
        if request.effect_id not in self.answers:
            raise AssertionError(f"the reordered run asked {request.effect_id}, which the recording never asked")
        return self.answers[request.effect_id]

    def evaluate(self, request: EvaluationRequested, code: str) -> Any:
        if request.effect_id not in self.evaluations:
            raise AssertionError(f"the reordered run evaluated {request.effect_id}, which the recording never ran")
        return self.evaluations[request.effect_id]


@cache
def recorded(name: str) -> Recorded:
    return Recorded(name)


def timeless(value: Any, key: str = "") -> Any:
    """A result without the fields that measure driven time (durations, deadlines, elapsed).

    Money sums are compared to 1e-12 USD: the runtime adds costs as they arrive, and float addition
    in another order differs in the last bits (0.041655000000000025 vs 0.04165500000000001).
    """
    if isinstance(value, dict):
        return {k: timeless(v, k) for k, v in value.items()
                if not (k.endswith(("_s", "_seconds")) or k in ("duration_summary", "elapsed"))}
    if isinstance(value, list):
        return [timeless(v) for v in value]
    if isinstance(value, float) and "cost" in key:
        return round(value, 12)
    return value


def rerun(name: str, order_seed: int | None):
    rec = recorded(name)
    return simulate(mle_star, agent=rec.agent, evaluate=rec.evaluate, start=rec.start, order_seed=order_seed,
                    timers_last=True, preamble=rec.preamble)


@pytest.mark.parametrize("name", [f.name for f in MLE_STAR])
def test_request_order_rerun_reproduces_the_final_result(name: str) -> None:
    """Baseline: results in request order (the driver's deterministic order) give the recorded result."""
    run = rerun(name, None)
    assert run.failed is None, run.failed
    assert run.completed is not None
    assert timeless(run.completed.payload()) == timeless(recorded(name).completed)


@pytest.mark.parametrize("name", [f.name for f in MLE_STAR])
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(order_seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_random_completion_order_gives_the_same_final_result(name: str, order_seed: int) -> None:
    run = rerun(name, order_seed)
    assert run.failed is None, run.failed
    assert run.completed is not None, "the reordered run did not complete"
    got, want = timeless(run.completed.payload()), timeless(recorded(name).completed)
    if got != want:
        diff = next(k for k in sorted(set(got["result"]) | set(want["result"]))
                    if got["result"].get(k) != want["result"].get(k)) if got.get("result") != want.get("result") else "?"
        pytest.fail(f"order_seed={order_seed}: the FinalResult differs (first differing part: {diff})")


def test_timeless_really_compares() -> None:
    """The comparison sees a changed score or solution (it only drops time-measuring fields)."""
    want = recorded(MLE_STAR[0].name).completed
    changed = {**want, "result": {**want["result"], "best_validation_score": -1.0}}
    assert timeless(changed) != timeless(want)
    retimed = {**want, "result": {**want["result"], "duration_summary": {"total_duration_seconds": 1.0}}}
    assert timeless(retimed) == timeless(want)
