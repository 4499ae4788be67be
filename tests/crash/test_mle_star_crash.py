"""Crash-exactness over the whole MLE-STAR pipeline with real processes (issue "Replay-based
regression suite", item 7; issues Phase 1/2/3 "Must show": a SIGKILL at any point, then
`engine resume`, gives the same result as an uninterrupted run, with no agent call or evaluation
repeated after its result was recorded; ARCHITECTURE "Effects are at-least-once, results
exactly-once", "Atomic reactions").

The agent is ``tests.crash.scripted:FastBackend``: deterministic canned answers for every role
(structured output for the retriever, extractor and leakage check) whose scripts are tiny real
Python, so one run takes seconds. Its scenario has a debug round, a leakage correction, an
accepted merge, and a Phase 2 path whose ablation needs a debug round, so that one path is in its
inner loop while the other is still ablating (one kill point is placed exactly there).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.crash.harness import (
    Recipe,
    comparable_decisions,
    final_result,
    inner_loop_while_other_path_ablates,
    kill_and_resume,
    run_reference,
    sample_points,
)

RECIPE = Recipe(task="wine", agent="tests.crash.scripted:FastBackend", settings=("ensemble_rounds=2",), seed=5)
PER_PHASE = {"phase1": 2, "phase2": 2, "phase3": 2, "final": 2}
SAMPLE_SEED = 20250611


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> tuple[list, Path]:
    root = tmp_path_factory.mktemp("mle-star-reference")
    return run_reference(RECIPE, root), root


def test_scenario_exercises_what_the_kills_should_hit(reference) -> None:
    log, _ = reference
    types = [e.type for e in log]
    assert types[-1] == "RunCompleted"
    origins = {e.payload.get("origin") for e in log if e.type == "SolutionRecorded"}
    assert {"debug", "leakage_fix", "merge", "refinement", "ensemble"} <= origins
    assert any(e.type == "MergeDecided" and e.payload["accepted"] for e in log)
    assert inner_loop_while_other_path_ablates(log) is not None


@pytest.mark.slow
def test_sigkill_at_sampled_events_of_every_phase_then_resume(reference, tmp_path: Path) -> None:
    log, root = reference
    points = sample_points(log, PER_PHASE, SAMPLE_SEED)
    assert all(len(points[p]) == n for p, n in PER_PHASE.items()), points
    special = inner_loop_while_other_path_ablates(log)
    # Every sampled point and the special one is a kill, each resumed, as a plan of its own would
    # resume it, and at the same event (``failpoint_seq``); chained, the later kills land in resumed
    # processes (killed again while resuming, from Phase 1 through Phase 2 and 3 to finalization).
    # Two whole runs instead of eleven.
    plans = [sorted([points["phase1"][0], special, points["phase2"][1], points["phase3"][1], points["final"][1]]),
             sorted([points["phase1"][1], points["phase2"][0], points["phase3"][0], points["final"][0]])]

    def one(i_plan):
        i, plan = i_plan
        return kill_and_resume(RECIPE, plan, tmp_path / f"plan-{i}", log, root)

    with ThreadPoolExecutor(max_workers=2) as pool:
        problems = [p for p in pool.map(one, enumerate(plans)) if p]
    assert not problems, "\n".join(problems)


def test_the_comparison_sees_a_changed_result_and_decision(reference) -> None:
    """The checks above can fail: a changed score or decision is a difference, timing is not."""
    log, root = reference
    i = next(i for i, e in enumerate(log) if e.type == "MergeDecided")
    changed = log[:i] + [log[i].model_copy(update={"payload": {**log[i].payload, "accepted": False}})] + log[i + 1:]
    assert comparable_decisions(changed, root) != comparable_decisions(log, root)
    j = len(log) - 1
    result = {**log[j].payload, "best_score": -1.0}
    assert final_result(log[:j] + [log[j].model_copy(update={"payload": result})], root) != final_result(log, root)
    retimed = [e.model_copy(update={"payload": {**e.payload, "elapsed_s": 1e6}}) for e in log]
    assert comparable_decisions(retimed, root) == comparable_decisions(log, root)
