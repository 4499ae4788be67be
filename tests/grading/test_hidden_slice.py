"""The held-back slice on real files: the view's data, its answers, NoSlice reasons, the cut and grade."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from engine.grading.grader import grade_submission, score_on_answers
from engine.grading.hidden_slice import HiddenSlice, NoSlice, cut_hidden_rows, draw_hidden_slice, slice_size
from engine.tasks import load_task
from engine.tasks.metrics import score_predictions
from engine.tasks.model import LoadedTask


def text(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


# --- slice_size ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("rows", "size"), [(0, 0), (1_999, 0), (2_000, 200), (2_009, 200), (2_010, 201),
                                            (49_999, 4_999), (100_000, 5_000), (10**7, 5_000)])
def test_slice_size_boundaries(rows, size):
    assert slice_size(rows) == size


@given(st.integers(min_value=0, max_value=10**8))
def test_slice_size_is_none_or_a_bounded_tenth(rows):
    size = slice_size(rows)
    assert size == 0 or 200 <= size <= 5_000
    assert size * 10 <= rows


# --- the view on a bundled task ------------------------------------------------------------------


def test_the_slice_is_a_tenth_of_the_training_rows(task, drawn):
    original = text(task.train_file)
    assert (drawn.rows, drawn.of_rows) == (210, len(original)) == (210, 2_100)
    assert drawn.view_dir.name == "public" and drawn.answers.parent == drawn.view_dir.parent
    assert not drawn.answers.is_relative_to(drawn.view_dir)
    ids = text(drawn.answers)[task.id_column]
    assert drawn.ids_digest == hashlib.sha256("\n".join(sorted(ids)).encode()).hexdigest()


def test_view_train_and_answers_partition_the_training_rows(task, drawn):
    original = text(task.train_file)
    kept = text(drawn.view_dir / task.train_file.name)
    answers = text(drawn.answers)
    assert list(kept.columns) == list(original.columns)
    assert len(kept) + len(answers) == len(original)
    held = set(answers[task.id_column])
    assert held.isdisjoint(kept[task.id_column]) and held <= set(original[task.id_column])
    # The kept rows are the original rows minus the held-back ones, text-exact and in order.
    expected = original[~original[task.id_column].isin(held)].reset_index(drop=True)
    pd.testing.assert_frame_equal(kept, expected)


def test_view_test_is_the_test_with_the_held_back_rows_appended(task, drawn):
    original_test = text(task.test_file)
    original_train = text(task.train_file)
    view_test = text(drawn.view_dir / task.test_file.name)
    held_ids = text(drawn.answers)[task.id_column]
    assert list(view_test.columns) == list(original_test.columns)
    pd.testing.assert_frame_equal(view_test.iloc[: len(original_test)], original_test)
    appended = view_test.iloc[len(original_test):].reset_index(drop=True)
    held_rows = original_train.set_index(task.id_column).loc[held_ids].reset_index()
    pd.testing.assert_frame_equal(appended, held_rows[list(original_test.columns)])
    assert "" in set(appended.to_numpy().ravel())  # empty cells stay empty, not "nan"


def test_view_sample_appends_the_held_back_ids(task, drawn):
    original = text(task.sample_submission)
    view = text(drawn.view_dir / task.sample_submission.name)
    pd.testing.assert_frame_equal(view.iloc[: len(original)], original)
    appended = view.iloc[len(original):].reset_index(drop=True)
    assert appended[task.id_column].tolist() == text(drawn.answers)[task.id_column].tolist()
    for column in task.target_columns:
        assert set(appended[column]) == {original[column].iloc[0]}


def test_other_public_files_are_identical(task, drawn):
    rewritten = {task.train_file.name, task.test_file.name, task.sample_submission.name}
    others = [p for p in task.public_dir.iterdir() if p.name not in rewritten]
    assert others and {p.name for p in drawn.view_dir.iterdir()} == {p.name for p in task.public_dir.iterdir()}
    for path in others:
        assert (drawn.view_dir / path.name).read_bytes() == path.read_bytes()


def test_answers_are_the_training_values_in_the_answers_shape(task, drawn):
    answers = text(drawn.answers)
    assert list(answers.columns) == list(pd.read_csv(task.answers, nrows=0).columns)
    train = text(task.train_file).set_index(task.id_column)
    for column in answers.columns.drop(task.id_column):
        assert answers[column].tolist() == train.loc[answers[task.id_column], column].tolist()


def test_the_seed_decides_the_slice(task, drawn, tmp_path):
    again = draw_hidden_slice(task, 0, tmp_path / "again")
    other = draw_hidden_slice(task, 1, tmp_path / "other")
    assert isinstance(again, HiddenSlice) and isinstance(other, HiddenSlice)
    assert again.ids_digest == drawn.ids_digest and other.ids_digest != drawn.ids_digest
    assert again.answers.read_bytes() == drawn.answers.read_bytes()
    for path in drawn.view_dir.iterdir():
        assert (again.view_dir / path.name).read_bytes() == path.read_bytes()


def test_a_used_directory_is_refused(task, tmp_path):
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "x").write_text("x")
    with pytest.raises(FileExistsError):
        draw_hidden_slice(task, 0, tmp_path / "used")


# --- NoSlice reasons ----------------------------------------------------------------------------


def small_task(root: Path, train_rows: int = 2_500, test_rows: int = 500, *, train_ids_from: int = 0,
               test_ids_from: int | None = None) -> Path:
    """A regression task in the split layout: public/ CSVs, private/answers.csv, task.yaml."""
    rng = np.random.default_rng(0)
    test_from = train_ids_from + train_rows if test_ids_from is None else test_ids_from
    public, private = root / "public", root / "private"
    public.mkdir(parents=True)
    private.mkdir()
    train = pd.DataFrame({"id": range(train_ids_from, train_ids_from + train_rows),
                          "x": rng.normal(size=train_rows)})
    train["y"] = train["x"] * 2
    test = pd.DataFrame({"id": range(test_from, test_from + test_rows), "x": rng.normal(size=test_rows)})
    train.to_csv(public / "train.csv", index=False)
    test.to_csv(public / "test.csv", index=False)
    test[["id"]].assign(y=0.0).to_csv(public / "sample_submission.csv", index=False)
    test[["id"]].assign(y=test["x"] * 2).to_csv(private / "answers.csv", index=False)
    (public / "description.md").write_text("# Small\n\nPredict y.\n")
    (root / "task.yaml").write_text(yaml.safe_dump({"evaluation_metric": "rmse", "id_column": "id",
                                                    "target_column": "y"}))
    return root


def test_a_fitting_small_task_gets_a_slice(tmp_path):
    drawn = draw_hidden_slice(load_task(small_task(tmp_path / "t")), 3, tmp_path / "slice")
    assert isinstance(drawn, HiddenSlice) and drawn.rows == 250


def _with_folder(root: Path) -> None:
    (root / "public" / "images").mkdir()
    (root / "public" / "images" / "a.png").write_bytes(b"png")


def _without_train_id(root: Path) -> None:
    train = pd.read_csv(root / "public" / "train.csv")
    train.drop(columns="id").to_csv(root / "public" / "train.csv", index=False)


@pytest.mark.parametrize(("build", "says"), [
    (lambda r: _with_folder(small_task(r)), "folders"),
    (lambda r: small_task(r, train_rows=1_999), "1,999 rows"),
    (lambda r: small_task(r, test_ids_from=2_400), "also test ids"),
    (lambda r: _without_train_id(small_task(r)), "training file has no id column 'id'"),
], ids=["subdirectory", "tiny", "overlapping ids", "no train id"])
def test_no_slice_says_why(tmp_path, build, says):
    root = tmp_path / "task"
    build(root)
    drawn = draw_hidden_slice(load_task(root), 0, tmp_path / "slice")
    assert isinstance(drawn, NoSlice) and says in drawn.reason
    assert not (tmp_path / "slice").exists()


def test_no_answers_means_no_slice(tmp_path):
    root = small_task(tmp_path / "task")
    (root / "private" / "answers.csv").unlink()
    drawn = draw_hidden_slice(load_task(root), 0, tmp_path / "slice")
    assert isinstance(drawn, NoSlice) and "private answers" in drawn.reason


# --- cutting and grading ------------------------------------------------------------------------


def one_hot(task: LoadedTask, ids: pd.Series, labels: pd.Series) -> pd.DataFrame:
    frame = pd.DataFrame({task.id_column: ids.to_numpy()})
    for column in task.target_columns:
        frame[column] = (labels.to_numpy() == column).astype(float)
    return frame


def write_submission(task: LoadedTask, drawn: HiddenSlice, run: Path, held_labels: pd.Series) -> pd.DataFrame:
    """A submission for every id of the view's sample, rows shuffled; the held-back rows carry
    ``held_labels`` as one-hot probabilities, the test rows a fixed guess."""
    test_ids = text(task.sample_submission)[task.id_column]
    answers = text(drawn.answers)
    guess = one_hot(task, test_ids, pd.Series(["hs_grad"] * len(test_ids)))
    frame = pd.concat([guess, one_hot(task, answers[task.id_column], held_labels)], ignore_index=True)
    frame = frame.sample(frac=1, random_state=7).reset_index(drop=True)
    (run / "final").mkdir(parents=True)
    frame.to_csv(run / "final" / "submission.csv", index=False)
    return frame


def hand_grade(task: LoadedTask, drawn: HiddenSlice, held_labels: pd.Series) -> float:
    answers = pd.read_csv(drawn.answers)
    return score_predictions(task.scoring, answers, one_hot(task, answers[task.id_column], held_labels))


def test_cut_keeps_the_test_rows_in_order_and_grades_the_held_back_ones(task, drawn, tmp_path):
    labels = text(drawn.answers)[task.answer_column]
    written = write_submission(task, drawn, tmp_path / "run", labels)
    submission = tmp_path / "run" / "final" / "submission.csv"
    graded = cut_hidden_rows(submission, drawn, task)
    assert graded.reason == "" and graded.rows == drawn.rows
    assert graded.score == pytest.approx(hand_grade(task, drawn, labels)) and graded.score < 1e-9

    test_ids = set(text(task.sample_submission)[task.id_column])
    left = text(submission)
    as_written = written.astype(str)[written[task.id_column].astype(str).isin(test_ids)]
    assert left[task.id_column].tolist() == as_written[task.id_column].tolist()
    assert set(left[task.id_column]) == test_ids
    cut = text(tmp_path / "run" / "hidden" / "predictions.csv")
    assert len(cut) == drawn.rows and set(cut[task.id_column]) == set(text(drawn.answers)[task.id_column])
    # The file the user gets is what the task's own grader accepts.
    assert grade_submission(task, submission).valid_submission


def test_shuffled_answers_grade_worse_by_the_same_rule(task, drawn, tmp_path):
    labels = text(drawn.answers)[task.answer_column]
    shuffled = labels.sample(frac=1, random_state=3).reset_index(drop=True)
    write_submission(task, drawn, tmp_path / "run", shuffled)
    graded = cut_hidden_rows(tmp_path / "run" / "final" / "submission.csv", drawn, task)
    assert graded.score == pytest.approx(hand_grade(task, drawn, shuffled))
    assert graded.score > hand_grade(task, drawn, labels) + 1


def test_missing_held_back_ids_grade_none_and_are_still_cut(task, drawn, tmp_path):
    labels = text(drawn.answers)[task.answer_column]
    written = write_submission(task, drawn, tmp_path / "run", labels)
    held = set(text(drawn.answers)[task.id_column])
    dropped = [i for i in written[task.id_column].astype(str) if i in held][:5]
    submission = tmp_path / "run" / "final" / "submission.csv"
    written[~written[task.id_column].astype(str).isin(dropped)].to_csv(submission, index=False)
    graded = cut_hidden_rows(submission, drawn, task)
    assert graded.score is None and graded.rows == drawn.rows - 5
    assert f"expected {drawn.rows} rows, got {drawn.rows - 5}" in graded.reason
    assert held.isdisjoint(text(submission)[task.id_column])


def test_ids_written_as_floats_are_cut_too(task, drawn, tmp_path):
    labels = text(drawn.answers)[task.answer_column]
    written = write_submission(task, drawn, tmp_path / "run", labels)
    submission = tmp_path / "run" / "final" / "submission.csv"
    written.assign(**{task.id_column: written[task.id_column].astype(float)}).to_csv(submission, index=False)
    graded = cut_hidden_rows(submission, drawn, task)
    assert graded.rows == drawn.rows and graded.score == pytest.approx(hand_grade(task, drawn, labels))
    left = {str(int(float(i))) for i in text(submission)[task.id_column]}
    assert left == set(text(task.sample_submission)[task.id_column])


def test_a_missing_file_is_graded_none_and_nothing_is_written(task, drawn, tmp_path):
    graded = cut_hidden_rows(tmp_path / "run" / "final" / "submission.csv", drawn, task)
    assert graded.score is None and graded.rows == 0 and graded.reason
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("content", [b"", b"\xff\xfe\x00bad", b"x,advanced_degree\n1,0.5\n"],
                         ids=["empty", "not text", "no id column"])
def test_an_unusable_file_is_left_alone(task, drawn, tmp_path, content):
    submission = tmp_path / "run" / "final" / "submission.csv"
    submission.parent.mkdir(parents=True)
    submission.write_bytes(content)
    graded = cut_hidden_rows(submission, drawn, task)
    assert graded.score is None and graded.rows == 0 and graded.reason
    assert submission.read_bytes() == content and not (tmp_path / "run" / "hidden").exists()


def test_score_on_answers_is_the_graders_rule(task):
    answers = pd.read_csv(task.answers)
    sub = one_hot(task, answers[task.id_column], answers[task.answer_column]).iloc[::-1]
    score, reason = score_on_answers(task, task.answers, sub)
    assert reason == "" and score == pytest.approx(score_predictions(task.scoring, answers, sub.iloc[::-1]))
    assert score_on_answers(task, task.answers, sub.iloc[1:]) == (None, f"expected {len(answers)} rows, got "
                                                                        f"{len(answers) - 1}")
