"""Crash-exactness of the evolutionary strategy with the builtin agent (issue "Replay-based
regression suite", item 7: SIGKILL at random events in both phases, resume → the same final
journal). Seeded random kill points in the draft phase and in the evolve phase, one plan killed
in both and resumed after each kill to the end, compared with an uninterrupted run of the same seed.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.crash.harness import Recipe, run_reference
from tests.crash.plans import run_plans

EVOLVE = Recipe(task="iris", agent="builtin", strategy="evolve", seed=4,
                settings=("max_steps=6", "steps_per_epoch=2", "phase1_target_nodes=2"))


@pytest.mark.slow
def test_evolution_sigkill_in_both_phases(tmp_path: Path) -> None:
    root = tmp_path / "reference"
    reference = run_reference(EVOLVE, root)
    assert reference[-1].type == "RunCompleted"
    switch = next(e.seq for e in reference if e.type == "EvoPhaseOneEnded")
    end = next(e.seq for e in reference if e.type == "EvoFinalNodeSelected")
    rng = random.Random(29)
    draft = rng.choice([e.seq for e in reference if e.scope == "evolve" and 1 < e.seq < switch])
    evolve = rng.choice([e.seq for e in reference if e.scope == "evolve" and switch < e.seq < end])
    assert any(e.type == "EvoOperatorDrawn" and e.payload["operator"] != "draft" for e in reference)
    # One plan killed in both phases: each kill is resumed, as a plan of its own would resume it,
    # and the second kill lands in a resumed process (plans [draft] and [evolve] added no kill
    # point, only two more whole runs).
    run_plans(EVOLVE, [[draft, evolve]], reference, root, tmp_path)
