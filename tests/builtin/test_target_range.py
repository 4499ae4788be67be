"""A regression member's predictions stay within the training target's observed range
(``script_blocks/training.py``'s ``in_target_range``), checked by running the scripts the agent
renders: a linear model that extrapolates two far test rows to thousands submits the target's
bounds for them instead, alone and inside a stacking blend, while rows within the range keep the
model's own predictions."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.agents.builtin.catalog import FAMILIES
from engine.agents.builtin.render import new_spec, render_solution, with_families

SCRIPT_TIMEOUT_S = 900  # a safety net against a hang, never what a test asserts


@pytest.fixture(scope="module")
def far_row(tmp_path_factory):
    from conftest import Env

    return Env("far-row", tmp_path_factory.mktemp("far-row"))


def _run_with_raw_predictions(env, spec):
    """Run the rendered script; also print each member's unclipped test predictions."""
    probe = ("\nimport json\nprint('RAW ' + json.dumps([np.asarray(m.predict(X_test)).tolist() for _, m in members]))\n")
    run = env.run(render_solution(spec) + probe, timeout=SCRIPT_TIMEOUT_S)
    assert run.rc == 0, run.stderr[-3000:]
    raw = json.loads([ln for ln in run.stdout.splitlines() if ln.startswith("RAW ")][-1][4:])
    return run, np.asarray(raw)


def _bounds(env):
    target = env.train()["amount"]
    return target.min(), target.max()


def test_a_linear_members_far_predictions_are_submitted_at_the_targets_bounds(far_row):
    run, raw = _run_with_raw_predictions(far_row, new_spec("regression", "rmse", 7, None, FAMILIES["linear"]))
    low, high = _bounds(far_row)
    assert raw[0][0] > 5 * high and raw[0][1] < -5 * high            # the model does extrapolate
    submitted = run.submission["amount"].to_numpy()
    assert submitted[0] == pytest.approx(high) and submitted[1] == pytest.approx(low)
    inside = (raw[0] >= low) & (raw[0] <= high)
    assert inside[2:].mean() > 0.9 and np.allclose(submitted[inside], raw[0][inside])  # the rest untouched
    assert run.score is not None and run.score < 10                  # the noise is 3; the rows within range score


def test_a_stacking_blend_of_a_linear_model_and_a_forest_stays_within_the_bounds(far_row):
    spec = with_families(new_spec("regression", "rmse", 7, None, FAMILIES["linear"]),
                         [FAMILIES["linear"], FAMILIES["random_forest"]])
    spec["train"]["combine"] = "stacking"
    run, _ = _run_with_raw_predictions(far_row, spec)
    low, high = _bounds(far_row)
    submitted = run.submission["amount"].to_numpy()
    assert ((submitted >= low - 1e-9) & (submitted <= high + 1e-9)).all()


@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=20), st.floats(-1e3, 1e3), st.floats(0, 1e3),
       st.floats(0, 1))
def test_clipping_never_moves_a_prediction_away_from_a_truth_within_the_range(preds, low, width, where):
    """Why only a row whose truth lies beyond every training row can lose by it."""
    high = low + width
    truth = low + where * width
    clipped = np.clip(np.asarray(preds), low, high)
    assert (np.abs(clipped - truth) <= np.abs(np.asarray(preds) - truth) + 1e-9).all()
