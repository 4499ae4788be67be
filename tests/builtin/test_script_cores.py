"""A builtin script uses the cores the engine gave it (``ENGINE_EVAL_CORES``): its OpenMP threads
(scikit-learn's HistGB) and LightGBM's ``n_jobs`` follow them; forests keep one job (threaded
forests sum their trees' probabilities in an order that depends on timing). More cores change no
result: the same score and submission as on one. Real scripts, run for real."""

from __future__ import annotations

import re

import pytest

# Appended to a script: what it took from the engine, and the n_jobs its members were built with.
PROBE = """
jobs = sorted({v for _, m in members for k, v in m.get_params().items() if k.endswith("n_jobs") and v is not None})
print("PROBE", CORES, os.environ["OMP_NUM_THREADS"], jobs)
"""


# What OpenMP is told is the script's to set: a caller's own setting (the environment this suite
# runs in) would stand, so the probes run without one.
def _cores(given: str) -> dict[str, str | None]:
    return {"ENGINE_EVAL_CORES": given, "OMP_NUM_THREADS": None}


def _probe(run) -> tuple[int, str, str]:
    found = re.search(r"PROBE (\d+) (\S+) (\[.*\])", run.stdout)
    assert found is not None, run.stdout + run.stderr
    return int(found.group(1)), found.group(2), found.group(3)


def test_a_script_given_two_cores_uses_them_and_scores_as_on_one(multiclass):
    script = multiclass.ok("init", task_description="", model_name="lightgbm", example_code="").code
    one, two = multiclass.run(script + PROBE, env=_cores("1")), \
        multiclass.run(script + PROBE, env=_cores("2"))
    assert one.rc == 0 and two.rc == 0, one.stderr + two.stderr
    assert _probe(one) == (1, "1", "[1]") and _probe(two) == (2, "2", "[2]")
    assert one.score == two.score is not None
    assert one.submission.equals(two.submission)


def test_a_forest_keeps_one_job_whatever_the_cores(regression):
    script = regression.ok("init", task_description="", model_name="random forest", example_code="").code
    run = regression.run(script + PROBE, env=_cores("2"))
    assert run.rc == 0, run.stderr
    assert _probe(run) == (2, "2", "[1]")


@pytest.mark.parametrize("given", ["", "many", "0", "-3"])
def test_a_script_told_nothing_usable_takes_one_core(regression, given):
    """Told something that is no count of cores (empty, not a number, not positive): one, as when
    run by hand without the variable."""
    script = regression.ok("init", task_description="", model_name="random forest", example_code="").code
    run = regression.run(script + PROBE, env=_cores(given))
    assert run.rc == 0, run.stderr
    assert _probe(run)[:2] == (1, "1")
