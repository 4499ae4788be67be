"""The harness with a held-back slice (docs/final-choice-slice.md), real scripts in real
subprocesses: a search step's script reads the slice's view and the held-back rows of its
submission are cut out and graded; finalization's test script reads the task's own data; no
script under the sandbox can read the held-back answers."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pandas as pd
import pytest

from engine.grading.grader import grade_submission, score_on_answers
from engine.grading.hidden_slice import HiddenSlice
from engine.harness import EvalContext, eval_dir_for, run_evaluation
from engine.harness.held_back import HeldBack
from engine.tasks.model import LoadedTask
from events.core import TEST_SCRIPT_PURPOSE, EvaluationRequested
from events.domain import solution_id_of
from handlers.script_lines import FINAL_RUN_LABEL

pytestmark = pytest.mark.anyio


# Predicts the sample submission's first row for every test id, and says what it saw.
CONSTANT = textwrap.dedent("""
    import os
    import pandas as pd
    test = pd.read_csv("input/test.csv", dtype=str, keep_default_na=False)
    sample = pd.read_csv("input/sample_submission.csv", dtype=str, keep_default_na=False)
    out = pd.concat([sample.iloc[[0]]] * len(test), ignore_index=True)
    out[{id!r}] = test[{id!r}].values
    out.to_csv("final/submission.csv", index=False)
    print(f"rows={{len(pd.read_csv('input/train.csv'))}} {{len(test)}}")
    print("answers_readable=", os.access({answers!r}, os.R_OK), sep="")
    print("Final Validation Performance: 0.5")
""")


def _ctx(tmp_path: Path, task: LoadedTask, drawn: HiddenSlice, sandbox_mode: str) -> EvalContext:
    return EvalContext(run_dir=tmp_path / "run", task_dir=task.public_dir, sample_submission=task.sample_submission,
                       subsample_limit=30000, metric=task.metric, sandbox_mode=sandbox_mode,
                       held_back=HeldBack(slice=drawn, task=task))


async def _evaluate(tmp_path: Path, task: LoadedTask, drawn: HiddenSlice, purpose: str, sandbox_mode: str):
    code = CONSTANT.format(id=task.id_column, answers=str(drawn.answers))
    request = EvaluationRequested(effect_id=f"phase2/{purpose}/eval", solution_id=solution_id_of(code),
                                  purpose=purpose, timeout_s=300, expect_submission=True)
    done = await run_evaluation(request, code, _ctx(tmp_path, task, drawn, sandbox_mode))
    assert not done.result.is_error, done.result.stderr
    lines = dict(line.split("=", 1) for line in done.result.stdout.splitlines() if "=" in line)
    return done, lines, eval_dir_for(tmp_path / "run", request.effect_id)


@pytest.mark.parametrize("sandbox_mode", ["none", "bwrap"])
async def test_a_search_step_reads_the_view_and_its_held_back_rows_are_cut_and_graded(
        tmp_path: Path, task: LoadedTask, drawn: HiddenSlice, sandbox_mode: str) -> None:
    done, seen, eval_dir = await _evaluate(tmp_path, task, drawn, "refinement", sandbox_mode)
    test_ids = pd.read_csv(task.test_file, dtype=str, keep_default_na=False)[task.id_column].tolist()
    assert seen["rows"] == f"{drawn.of_rows - drawn.rows} {len(test_ids) + drawn.rows}"
    if sandbox_mode == "bwrap":
        assert seen["answers_readable"] == "False"
    # the file left holds the task's own test rows only, in order, and is a valid submission
    left = pd.read_csv(eval_dir / "final" / "submission.csv", dtype=str, keep_default_na=False)
    assert left[task.id_column].tolist() == test_ids
    assert done.submission is not None and done.submission.valid, done.submission
    assert grade_submission(task, eval_dir / "final" / "submission.csv").valid_submission
    # the held-back rows are graded as a grader would grade them
    cut = pd.read_csv(eval_dir / "hidden" / "predictions.csv")
    assert len(cut) == drawn.rows
    expected, reason = score_on_answers(task, drawn.answers, cut)
    assert reason == "" and done.hidden_score == pytest.approx(expected)


async def test_finalizations_test_script_reads_the_tasks_own_data(tmp_path: Path, task: LoadedTask,
                                                                  drawn: HiddenSlice) -> None:
    done, seen, eval_dir = await _evaluate(tmp_path, task, drawn, TEST_SCRIPT_PURPOSE, "none")
    test_rows = len(pd.read_csv(task.test_file))
    assert seen["rows"] == f"{drawn.of_rows} {test_rows}"
    assert done.hidden_score is None and not (eval_dir / "hidden").exists()
    assert done.submission is not None and done.submission.valid, done.submission


async def test_a_script_that_leaves_out_held_back_rows_is_not_graded_and_its_file_stays_clean(
        tmp_path: Path, task: LoadedTask, drawn: HiddenSlice) -> None:
    code = CONSTANT.format(id=task.id_column, answers=str(drawn.answers)).replace(
        'out.to_csv("final/submission.csv"', 'out.iloc[:-5].to_csv("final/submission.csv"')
    request = EvaluationRequested(effect_id="phase2/short/eval", solution_id=solution_id_of(code),
                                  purpose="refinement", timeout_s=300, expect_submission=True)
    done = await run_evaluation(request, code, _ctx(tmp_path, task, drawn, "none"))
    assert done.hidden_score is None
    held_back = set(pd.read_csv(drawn.answers, dtype=str, keep_default_na=False)[task.id_column])
    left = pd.read_csv(eval_dir_for(tmp_path / "run", request.effect_id) / "final" / "submission.csv", dtype=str,
                       keep_default_na=False)
    assert not held_back & set(left[task.id_column])


@pytest.mark.parametrize(("purpose", "scale"), [("refinement", 2100 / 1890), (TEST_SCRIPT_PURPOSE, 1.0)])
async def test_a_search_scripts_estimate_of_its_test_run_counts_the_held_back_rows(
        tmp_path: Path, task: LoadedTask, drawn: HiddenSlice, purpose: str, scale: float) -> None:
    """The test version reads every training row, the held-back ones too: a search script's
    estimate of its run (made on the rows it saw) grows by their share."""
    code = f'print("{FINAL_RUN_LABEL} 10.0")\nprint("Final Validation Performance: 0.5")\n'
    request = EvaluationRequested(effect_id=f"phase2/estimate-{purpose}/eval", solution_id=solution_id_of(code),
                                  purpose=purpose, timeout_s=300)
    done = await run_evaluation(request, code, _ctx(tmp_path, task, drawn, "none"))
    assert (drawn.rows, drawn.of_rows) == (210, 2100)
    assert done.final_run_estimate_s == pytest.approx(10.0 * scale)
