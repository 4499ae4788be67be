"""A run's final submission is checked against the sample submission *and* the form the task's
metric scores, by the harness (facts) with the registry grading uses; and against the sample the
task names, whatever its file is called."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pandas as pd
import pytest

from engine.harness.executor import EvalContext, run_evaluation
from engine.harness.submission import check_submission
from engine.tasks import prepare_bundled
from engine.tasks.layout import sample_submission_for
from events.core import EvaluationRequested
from events.values import solution_id_of
from tests.tasks import folders


def _files(tmp_path: Path, sample: dict, submission: dict) -> tuple[Path, Path]:
    pd.DataFrame(sample).to_csv(tmp_path / "sample.csv", index=False)
    pd.DataFrame(submission).to_csv(tmp_path / "submission.csv", index=False)
    return tmp_path / "submission.csv", tmp_path / "sample.csv"


@pytest.mark.parametrize("metric,values,says", [
    ("quadratic_weighted_kappa", [0.2, 0.7], "not a whole rating"),
    ("rmse", ["high", "low"], "non-numeric"),
    ("logloss", [1.5, 0.2], "must lie in [0, 1]"),
    ("map@3", ["a b c d", "a"], "more than 3 labels"),
    ("accuracy", ["", "x"], "empty value"),
])
def test_a_submission_the_metric_cannot_score_is_invalid(tmp_path, metric, values, says):
    submission, sample = _files(tmp_path, {"id": [1, 2], "y": [0, 0]}, {"id": [1, 2], "y": values})
    info = check_submission(submission, sample, metric)
    assert not info.valid and says in info.reason
    assert check_submission(submission, sample).valid  # the sample's ids and columns alone are met


@pytest.mark.parametrize("metric,values", [
    ("quadratic_weighted_kappa", [3, 5]), ("rmse", [1.5, -2]), ("logloss", [0.0, 1.0]),
    ("map@3", ["a b c", "b"]), ("accuracy", ["cat", "dog"]), ("house_score", ["anything", "1"]),
])
def test_a_submission_in_the_metrics_form_is_valid(tmp_path, metric, values):
    submission, sample = _files(tmp_path, {"id": [1, 2], "y": [0, 0]}, {"id": [1, 2], "y": values})
    assert check_submission(submission, sample, metric).valid


def test_the_sample_is_the_one_task_yaml_names(tmp_path):
    root = folders.regression(tmp_path / "plain")
    (root / "sample_submission.csv").rename(root / "submissionFormat.csv")
    folders.meta(root, sample_submission="submissionFormat.csv")
    assert sample_submission_for(root) == (root / "submissionFormat.csv").resolve()


def test_the_sample_of_split_and_prepared_layouts(tmp_path):
    prepared = prepare_bundled("iris", tmp_path / "iris")
    public = prepared / "prepared" / "public"
    assert sample_submission_for(public) == (public / "sample_submission.csv").resolve()
    split = tmp_path / "split"
    folders.regression(split / "public")
    (split / "public" / "sample_submission.csv").rename(split / "public" / "sampleSubmission.csv")
    assert sample_submission_for(split / "public") == (split / "public" / "sampleSubmission.csv").resolve()


@pytest.mark.anyio
async def test_the_harness_marks_probabilities_in_a_kappa_submission_invalid(tmp_path):
    """The issue's wine run, as a real script: probabilities where ratings belong."""
    task = folders.classes(tmp_path / "wine", {"quality": [3, 4, 5, 6], "sweetness": [0, 1, 2]},
                           "quadratic weighted kappa")
    code = textwrap.dedent("""
        import pandas as pd
        test = pd.read_csv("input/test.csv")
        pd.DataFrame({"id": test["id"], "quality": 0.25, "sweetness": 0.5}).to_csv("final/submission.csv", index=False)
        print("Final Validation Performance: 0.87")
    """)
    ctx = EvalContext(run_dir=tmp_path / "run", task_dir=task, sample_submission=sample_submission_for(task),
                      subsample_limit=30000, metric="quadratic_weighted_kappa")
    request = EvaluationRequested(effect_id="final/test/eval", solution_id=solution_id_of(code), purpose="test",
                                  timeout_s=60, expect_submission=True)
    done = await run_evaluation(request, code, ctx)
    assert done.submission is not None and done.submission.exists
    assert not done.submission.valid and "not a whole rating" in done.submission.reason


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
