"""Invalid submissions are rejected with their reason; ungradeable tasks raise TaskError."""

from __future__ import annotations

import pandas as pd
import pytest

from engine.grading.grader import grade_submission
from engine.tasks import TaskError, load_task


@pytest.fixture(scope="module")
def wine(prepared):
    task = load_task(prepared["wine"])
    return task, pd.read_csv(task.answers)


@pytest.fixture(scope="module")
def bc(prepared):
    task = load_task(prepared["breast-cancer"])
    return task, pd.read_csv(task.answers)


def _grade(task, frame_or_text, tmp_path):
    path = tmp_path / "submission.csv"
    if isinstance(frame_or_text, str):
        path.write_text(frame_or_text)
    else:
        frame_or_text.to_csv(path, index=False)
    report = grade_submission(task, path)
    assert report.submission_exists
    assert not report.valid_submission and report.score is None and not report.any_medal
    return report.reason


def test_missing_file(wine, tmp_path):
    task, _ = wine
    report = grade_submission(task, tmp_path / "absent.csv")
    assert report.submission_exists is False and report.valid_submission is False
    assert "submission file not found" in report.reason


def test_wrong_row_count(wine, tmp_path):
    task, answers = wine
    reason = _grade(task, answers.iloc[:-2], tmp_path)
    assert reason == f"expected {len(answers)} rows, got {len(answers) - 2}"


def test_duplicate_ids(wine, tmp_path):
    task, answers = wine
    sub = answers.copy()
    sub.loc[1, "id"] = sub.loc[0, "id"]
    assert "1 duplicate id(s)" in _grade(task, sub, tmp_path)


def test_unknown_ids(wine, tmp_path):
    task, answers = wine
    sub = answers.copy()
    sub.loc[0, "id"] = 99999
    reason = _grade(task, sub, tmp_path)
    assert "1 id(s) not in the test set, e.g. ['99999']" in reason


def test_missing_column(wine, tmp_path):
    task, answers = wine
    reason = _grade(task, answers.rename(columns={"cultivar": "label"}), tmp_path)
    assert "missing column(s) ['cultivar']" in reason


def test_missing_id_column(wine, tmp_path):
    task, answers = wine
    assert "missing column(s) ['id']" in _grade(task, answers[["cultivar"]], tmp_path)


def test_empty_label(wine, tmp_path):
    task, answers = wine
    sub = answers.astype({"cultivar": float})
    sub.loc[3, "cultivar"] = None
    assert "column 'cultivar' has 1 empty value(s)" in _grade(task, sub, tmp_path)


def test_non_numeric_probability(bc, tmp_path):
    task, answers = bc
    sub = answers.astype({"malignant": object})
    sub.loc[0, "malignant"] = "very likely"
    reason = _grade(task, sub, tmp_path)
    assert "column 'malignant' has 1 missing or non-numeric value(s), e.g. 'very likely'" in reason


def test_probability_out_of_range(bc, tmp_path):
    task, answers = bc
    sub = answers.astype({"malignant": float})
    sub.loc[0, "malignant"] = 1.5
    assert "must lie in [0, 1]" in _grade(task, sub, tmp_path)


def test_empty_and_garbage_files(wine, tmp_path):
    task, _ = wine
    assert "cannot read the submission as CSV" in _grade(task, "", tmp_path)
    assert "missing column(s)" in _grade(task, "just some text\n", tmp_path)


def test_task_without_answers_cannot_be_graded(tmp_path):
    root = tmp_path / "plain"
    root.mkdir()
    (root / "description.md").write_text("# P\n")
    (root / "sample_submission.csv").write_text("id,y\n1,0\n")
    (root / "task.yaml").write_text("evaluation_metric: rmse\n")
    with pytest.raises(TaskError, match="has no private answers"):
        grade_submission(load_task(root), root / "sample_submission.csv")
