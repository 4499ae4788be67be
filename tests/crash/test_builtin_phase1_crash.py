"""Crash-exactness with the real builtin agent on a sampled Phase 1 run (issue "Replay-based
regression suite", item 7; issue Phase 1 "Must show": SIGKILL after any event of a Phase 1 run
with the builtin agent — sampled here). Strategy ``handlers.mlestar.phase1:phase1_only`` on iris: the
kill points are failpoints of two plans, each resumed after every kill and at last to the end,
then its RunCompleted result and every decision compared with an uninterrupted run of the same
seed; no agent call or evaluation whose result was recorded may run again.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.crash.harness import Recipe, run_reference, sample_points
from tests.crash.plans import run_plans

PHASE1 = Recipe(task="iris", agent="builtin", strategy="handlers.mlestar.phase1:phase1_only", seed=3)


@pytest.mark.slow
def test_builtin_phase1_sigkill_at_sampled_events(tmp_path: Path) -> None:
    root = tmp_path / "reference"
    reference = run_reference(PHASE1, root)
    assert reference[-1].type == "RunCompleted"
    points = sample_points(reference, {"phase1": 3}, seed=11)["phase1"]
    evals = [e.seq for e in reference if e.type == "EvaluationCompleted"]
    # Every kill is resumed, and each lands after the same event as in a fresh run of its own
    # (``failpoint_seq``): the sampled points and two kills right after a result (the first and the
    # last evaluation) in one plan, one whole run instead of two.
    plan = sorted({*points, evals[0], evals[-1]})
    assert len(plan) >= 4, plan
    run_plans(PHASE1, [plan], reference, root, tmp_path)
