"""A booster draft asked to fit a window (ENGINE_EVAL_FIT_BY, Phase 1's drafts) paces its first
reading to it (script_blocks/early_stop.py; docs/decisions/0032): when its rounds, timed past the
first PACE_ROUNDS, show that its work at its longest would not end in the window, it starts again
learning up to MAX_SPEEDUP times faster in as many times fewer rounds, and every later fit of the
member (the folds, the refit) learns at that rate. A script not asked, or given room, is the script
it was. The script is run whole, as the engine runs it; no verdict depends on the machine's speed:
a window already over holds no round at all, one of an hour holds every round here.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from engine.agents.builtin.catalog import FAMILIES
from engine.agents.builtin.render import new_spec, render_solution

SCRIPT_TIMEOUT_S = 900   # a safety net against a hang, never a measure
pytestmark = [pytest.mark.skipif("lightgbm" not in FAMILIES, reason="needs the ml extra (LightGBM)"),
              pytest.mark.timeout(2 * SCRIPT_TIMEOUT_S)]


@pytest.fixture(scope="module")
def counts(tmp_path_factory):
    from conftest import Env

    return Env("dated-counts-3k", tmp_path_factory.mktemp("dated-counts-3k"))


def test_a_draft_asked_to_fit_a_short_window_learns_faster_and_fits_every_fold_at_that_rate(counts):
    spec = new_spec("regression", "rmse", 7, None, FAMILIES["lightgbm"])
    spec["model"]["members"][0]["params"].update({"n_estimators": 400, "learning_rate": 0.03})
    code = render_solution(spec) + textwrap.dedent("""
        import json
        readings = []
        for fit_by in (float("inf"), time.time() + 3600, time.time() - 1):   # not asked; room; no room
            FIT_BY = fit_by
            STOPPING_ROUNDS.clear()
            SPED_UP.clear()
            model = clone(members[0][1]).fit(X_cv, y_cv)
            refit = clone(members[0][1]).fit(X_cv.iloc[:2000], y_cv[:2000])   # a fold after the reading
            readings.append([list(SPED_UP.values()), model.named_steps["model"].estimator_.learning_rate,
                             refit.named_steps["model"].estimator_.learning_rate])
        print("PROBE " + json.dumps(readings))
    """)
    run = counts.run(code, timeout=SCRIPT_TIMEOUT_S)
    assert run.rc == 0, run.stderr
    not_asked, room, no_room = json.loads(run.stdout.split("PROBE ")[-1])
    assert not_asked == [[], 0.03, 0.03]
    assert room == [[], 0.03, 0.03]
    # a window already over: however fast the rounds, the most, 8 times
    assert no_room == [[{"learning_rate": pytest.approx(0.24)}], pytest.approx(0.24), pytest.approx(0.24)]
    assert "Learning 8.00 times faster to fit the window given: learning_rate 0.24" in run.stdout


def test_the_search_scripts_read_no_window_unless_the_engine_gives_one(counts):
    """The script reads ENGINE_EVAL_FIT_BY at its start; the harness sets it only when asked."""
    spec = new_spec("regression", "rmse", 7, None, FAMILIES["lightgbm"])
    code = render_solution(spec) + "\nprint('PROBE', FIT_BY)\n"
    unset = counts.run(code, timeout=SCRIPT_TIMEOUT_S, env={"ENGINE_EVAL_FIT_BY": None})
    assert unset.stdout.split("PROBE ")[-1].strip() == "inf"
    given = counts.run(code, timeout=SCRIPT_TIMEOUT_S, env={"ENGINE_EVAL_FIT_BY": "12345.5"})
    assert given.stdout.split("PROBE ")[-1].strip() == "12345.5"
