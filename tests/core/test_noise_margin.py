"""A refinement or merge replaces its incumbent only when it wins by more than the validation noise
(``events.score.Score.clears_noise``, ``PipelineConfig.noise_margin_se``; REQ-DM-029 with the time
preset's margin, REQ-P2I-025/026, REQ-P1-027).

earthquake-magnitude at 600 s (seed 0) showed why: its scripts score by 5-fold out-of-fold
predictions over the same 1,195 rows at every step, and five refinements that each won by a hair
took validation from 0.37877 to 0.37120 while the private grade went from 0.38776 to 0.39712. A
builtin script prints its metric on 16 fixed groups of its scored rows
(``Validation Score Groups:``, ``handlers.script_lines``); the harness records them
(``EvaluationCompleted.score_groups``), and two scores on the same rows are compared paired.
"""

from __future__ import annotations

import math
import textwrap

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.config.presets import build_config
from engine.harness import EvalContext, run_evaluation
from events.base import load_event
from events.core import EvaluationCompleted, EvaluationRequested
from events.domain import MetricDirection, PipelineConfig, solution_id_of
from events.score import MIN_NOISE_GROUPS, Score, paired_noise
from handlers.script_lines import MAX_GROUPS, SCORE_GROUPS_LABEL, score_groups

RMSE = Score(MetricDirection.minimize)
AUC = Score(MetricDirection.maximize)
values = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False)


# --- the script's line --------------------------------------------------------------------------


@pytest.mark.parametrize(("stdout", "expected"), [
    ("Validation Score Groups: 0.5 0.25 nan 1e-3\n", (0.5, 0.25, None, 0.001)),
    ("Validation Score Groups: 1 2\nValidation Score Groups: 3 4 5\n", (3.0, 4.0, 5.0)),   # the last decides
    ("Validation Score Groups: 1 2\nValidation Score Groups: 3 four\n", None),   # ... even unreadable
    ("Validation Score Groups: 7\n", None),                  # one group: no pairs to weigh
    ("Validation Score Groups: 1 inf -inf 2", (1.0, None, None, 2.0)),   # no newline at the end
    ("Validation Score Groups:\n", None),
    ("no line at all\n", None),
])
def test_REQ_EX_011_the_groups_are_read_off_the_last_line(stdout: str, expected: tuple | None) -> None:
    assert score_groups(stdout) == expected


def test_more_groups_than_the_cap_are_not_read() -> None:
    assert score_groups(f"{SCORE_GROUPS_LABEL} " + " ".join(["1"] * (MAX_GROUPS + 1))) is None
    assert score_groups(f"{SCORE_GROUPS_LABEL} " + " ".join(["1"] * MAX_GROUPS)) == (1.0,) * MAX_GROUPS


# --- the rule -----------------------------------------------------------------------------------


def test_paired_noise_is_the_standard_error_of_the_mean_difference() -> None:
    old = [1.0] * 10
    new = [0.9, 1.1] * 5            # differences -0.1, +0.1: sd 0.1054, se 0.0333
    assert paired_noise(RMSE, new, old) == pytest.approx(math.sqrt(sum(0.01 for _ in range(10)) / 9 / 10))


@pytest.mark.parametrize(("new", "old"), [
    (None, [1.0] * 16), ([1.0] * 16, None), ([1.0] * 16, [1.0] * 15),     # missing, or different groups
    ([1.0] * (MIN_NOISE_GROUPS - 1), [2.0] * (MIN_NOISE_GROUPS - 1)),     # too few pairs
    ([1.0] * 8 + [None] * 8, [None] * 8 + [1.0] * 8),                     # no pair usable on both sides
])
def test_noise_that_cannot_be_measured_is_none(new, old) -> None:
    assert paired_noise(RMSE, new, old) is None
    # ... and the plain rule decides alone.
    assert RMSE.clears_noise(0.999, 1.0, margin=1.0, new_groups=new, old_groups=old)


def test_a_win_by_a_hair_does_not_clear_the_noise_and_a_steady_one_does() -> None:
    """The same gain in the overall score, 0.003 RMSE: spread over the groups as noise (half the
    groups better by 0.1, half worse by 0.094) it is within one standard error; as the same small
    gain in every group it is far beyond."""
    old = [1.0] * 16
    noisy = [0.9, 1.094] * 8
    steady = [0.997] * 16
    assert not RMSE.clears_noise(0.997, 1.0, margin=1.0, new_groups=noisy, old_groups=old)
    assert RMSE.clears_noise(0.997, 1.0, margin=1.0, new_groups=steady, old_groups=old)
    # A zero margin is the paper's rule: any usable score may go on to the plain comparison.
    assert RMSE.clears_noise(0.997, 1.0, margin=0.0, new_groups=noisy, old_groups=old)


def test_the_direction_of_the_metric_is_the_rules() -> None:
    old = [0.8] * 16
    better = [0.81] * 16
    assert AUC.clears_noise(0.81, 0.8, margin=1.0, new_groups=better, old_groups=old)
    assert not AUC.clears_noise(0.79, 0.8, margin=1.0, new_groups=[0.79] * 16, old_groups=old)
    assert not RMSE.clears_noise(0.81, 0.8, margin=1.0, new_groups=better, old_groups=old)


def test_unusable_scores() -> None:
    assert not RMSE.clears_noise(None, 1.0, margin=1.0)
    assert not RMSE.clears_noise(float("nan"), 1.0, margin=1.0)
    assert RMSE.clears_noise(1.0, None, margin=1.0, new_groups=[1.0] * 16, old_groups=[2.0] * 16)


@given(groups=st.lists(values, min_size=MIN_NOISE_GROUPS, max_size=32), score=values,
       margin=st.floats(min_value=0.01, max_value=5))
def test_identical_groups_never_clear_a_positive_margin_by_a_tie(groups, score, margin) -> None:
    """The same predictions (same groups, same score) are no win: the incumbent stays."""
    assert not RMSE.clears_noise(score, score, margin=margin, new_groups=groups, old_groups=groups)


@given(old=st.lists(values, min_size=MIN_NOISE_GROUPS, max_size=32), gain=st.floats(1e-3, 10),
       jitter=st.lists(st.floats(-1, 1), min_size=32, max_size=32), margin=st.floats(0.5, 3))
def test_a_larger_margin_never_accepts_what_a_smaller_refuses(old, gain, jitter, margin) -> None:
    new = [o - gain + j for o, j in zip(old, jitter, strict=False)]
    overall_old, overall_new = sum(old) / len(old), sum(new) / len(new)
    if RMSE.clears_noise(overall_new, overall_old, margin=margin * 2, new_groups=new, old_groups=old):
        assert RMSE.clears_noise(overall_new, overall_old, margin=margin, new_groups=new, old_groups=old)


# --- the configuration --------------------------------------------------------------------------


def test_the_time_preset_sets_one_standard_error_and_the_fixed_presets_the_papers_rule() -> None:
    assert build_config(preset="time").noise_margin_se == 1.0
    assert build_config(preset="paper").noise_margin_se == 0.0
    assert build_config(preset="quick").noise_margin_se == 0.0


def test_a_config_recorded_before_the_margin_dumps_and_loads_as_it_did() -> None:
    """Left out of the dump at 0 (RunCompleted embeds the config, and old logs replay by it)."""
    assert "noise_margin_se" not in PipelineConfig().model_dump()
    assert PipelineConfig.model_validate(PipelineConfig().model_dump()).noise_margin_se == 0.0
    assert PipelineConfig(noise_margin_se=1.0).model_dump()["noise_margin_se"] == 1.0
    with pytest.raises(ValueError, match="noise_margin_se"):
        PipelineConfig(noise_margin_se=-1.0)


# --- the harness records them; old logs -----------------------------------------------------------


@pytest.mark.anyio
async def test_the_harness_records_the_groups_a_real_script_prints(tiny_eval_context: EvalContext) -> None:
    ctx = tiny_eval_context
    code = textwrap.dedent("""
        print("Final Validation Performance: 0.75")
        print("Validation Score Groups:", " ".join(str(0.7 + i / 100) for i in range(10)), "nan")
    """)
    request = EvaluationRequested(effect_id="phase2/path-0/t0/k0/eval", solution_id=solution_id_of(code),
                                  purpose="refinement", timeout_s=60)
    done = await run_evaluation(request, code, ctx)
    assert isinstance(done, EvaluationCompleted)
    assert done.score_groups == (*(pytest.approx(0.7 + i / 100) for i in range(10)), None)
    again = load_event("EvaluationCompleted", 5, done.model_dump(mode="json"))
    assert again == done


def test_old_evaluations_load_without_groups() -> None:
    """v4 (and earlier) upcast to None: no script of theirs printed groups."""
    done = load_event("EvaluationCompleted", 4, {
        "effect_id": "e", "elapsed_s": 1.0, "final_run_estimate_s": None, "sandbox": None, "scored_rows": None,
        "result": {"score": 0.5, "stdout": "", "stderr": "", "exit_code": 0, "duration_seconds": 1.0,
                   "is_error": False}})
    assert isinstance(done, EvaluationCompleted) and done.score_groups is None
