"""The data side of hidden consistent evaluation: a slice of training rows no search step sees.

A search that picks among many candidates on the same validation folds overfits them, so a run
may hold back a slice of its training rows. The search's scripts read a *view* of the task's
public data in which those rows have moved from the training file to the test file (without
their answers) and their ids are appended to the sample submission. Every submission a script
writes therefore predicts them too; ``cut_hidden_rows`` takes them out of the file after the
script ends and grades them against the held-back answers, so the final choice can rest on a
grade the search never saw. A slice is drawn only where this can be done faithfully: otherwise
``draw_hidden_slice`` returns a ``NoSlice`` saying why, and the run goes on without one.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from engine.grading.grader import score_on_answers
from engine.grading.mlebench import mlebench_competition
from engine.tasks.metrics import metric_info
from engine.tasks.model import LoadedTask, TaskError, label_str

SLICE_FRACTION = 10        # at most one training row in this many is held back
MAX_SLICE_ROWS = 5000      # beyond this many rows a grade's noise barely shrinks; the models keep the rest
MIN_SLICE_ROWS = 200       # fewer rows cannot tell close candidates apart, and cost the models data
# Mixed with the run's seed, so this draw is not the same stream as any other use of that seed.
SLICE_STREAM = 48_151_623
_UNREADABLE = (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError)


@dataclass(frozen=True)
class HiddenSlice:
    """A drawn slice: the view the search's scripts read as ./input, and what grades it."""

    view_dir: Path     # dest/"public": what the search's scripts read as ./input
    answers: Path      # dest/"answers.csv": id + answer columns of the held-back rows (outside view_dir)
    rows: int          # held back
    of_rows: int       # rows of the task's training file
    ids_digest: str    # sha256 hex of the held-back ids (as text, sorted, joined by "\n")


@dataclass(frozen=True)
class NoSlice:
    """Why a run holds nothing back: one sentence for the user."""

    reason: str


@dataclass(frozen=True)
class HiddenGrade:
    """The grade of the held-back rows of one submission."""

    score: float | None   # None when it could not be graded
    reason: str           # why not; "" when graded
    rows: int             # held-back rows found in the submission


@dataclass(frozen=True)
class _Tables:
    """The three public files the view rewrites, read as text so every value round-trips."""

    train: pd.DataFrame
    test: pd.DataFrame
    sample: pd.DataFrame
    answer_columns: list[str]


def slice_size(train_rows: int) -> int:
    """Rows held back from a training file of ``train_rows`` rows: a tenth, capped, and none when
    that tenth would be too small to grade on (fewer than 2,000 rows)."""
    size = min(MAX_SLICE_ROWS, train_rows // SLICE_FRACTION)
    return size if size >= MIN_SLICE_ROWS else 0


def draw_hidden_slice(task: LoadedTask, seed: int, dest: Path) -> HiddenSlice | NoSlice:
    """Hold back a slice of ``task``'s training rows and write the view under ``dest``, or say why
    this task allows none. The same task and seed always hold back the same rows. Nothing is
    written for a ``NoSlice``; ``dest`` must not exist or be empty."""
    problem = _files_problem(task)
    if problem:
        return NoSlice(problem)
    tables = _read_tables(task)
    if isinstance(tables, str):
        return NoSlice(tables)
    problem = _columns_problem(task, tables) or _ids_problem(task, tables)
    if problem:
        return NoSlice(problem)
    picked = _pick_rows(tables, seed)
    if isinstance(picked, str):
        return NoSlice(picked)
    return _write_view(task, tables, picked, Path(dest))


def _files_problem(task: LoadedTask) -> str | None:
    """Why the task's files or grading rule do not allow a slice, before any data is read."""
    files = {"training file": task.train_file, "test file": task.test_file,
             "sample submission": task.sample_submission, "private answers file": task.answers}
    for what, path in files.items():
        if path is None:
            return f"the task has no {what}, so no training rows can be held back to grade on"
        if path.suffix.lower() != ".csv":
            return f"the task's {what} {path.name} is not a CSV file, so its rows cannot be moved"
    if any(p.is_dir() for p in task.public_dir.iterdir()):
        return ("the task's data has folders (e.g. images under train/ and test/), whose files would "
                "have to move with the held-back rows; this is not supported")
    try:
        metric_info(task.metric)
    except TaskError:
        return f"the engine cannot grade the metric {task.metric!r} itself, so held-back rows could not be graded"
    if mlebench_competition(task) is not None:
        return "the task is graded by MLE-bench's own grader, which cannot grade held-back training rows"
    return None


def _read_text(path: Path) -> pd.DataFrame:
    # Text, not parsed values: ids like "007" and empty cells must be written back exactly as read.
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def _read_tables(task: LoadedTask) -> _Tables | str:
    """The files a view rewrites, or why one of them cannot be read."""
    assert task.train_file and task.test_file and task.sample_submission and task.answers
    try:
        return _Tables(train=_read_text(task.train_file), test=_read_text(task.test_file),
                       sample=_read_text(task.sample_submission),
                       answer_columns=list(pd.read_csv(task.answers, nrows=0).columns))
    except _UNREADABLE as exc:
        return f"a data file of the task cannot be read as CSV ({exc}), so no rows can be held back"


def _columns_problem(task: LoadedTask, tables: _Tables) -> str | None:
    """Why the held-back rows could not be written in the test file's and the answers' shape."""
    id_col = task.id_column
    for what, frame in (("training file", tables.train), ("test file", tables.test),
                        ("sample submission", tables.sample)):
        if id_col not in frame.columns:
            return f"the {what} has no id column {id_col!r}, so held-back rows could not be matched by id"
    if tables.sample.empty:
        return "the sample submission has no rows to copy for the held-back ids"
    extra = [c for c in tables.test.columns if c not in tables.train.columns]
    if extra:
        return (f"the test file has column(s) {extra[:3]} the training file lacks, so training rows "
                "cannot pass as test rows")
    absent = [c for c in tables.answer_columns if c not in tables.train.columns]
    if absent:
        return (f"the answers' column(s) {absent[:3]} are not in the training file, so the held-back "
                "rows' answers cannot be taken from it")
    return None


def _ids_problem(task: LoadedTask, tables: _Tables) -> str | None:
    """Why ids could not tell held-back rows apart in a submission. Ids compare as the grader
    compares them (7, 7.0 and "7" are one id), so a cut never misses a row the grader would match."""
    train_ids = tables.train[task.id_column].map(label_str)
    if train_ids.duplicated().any():
        return "the training file's ids are not unique, so a held-back row could not be told from another"
    if train_ids.isin(set(tables.test[task.id_column].map(label_str))).any():
        return "some training ids are also test ids, so held-back rows could not be told from test rows"
    return None


def _pick_rows(tables: _Tables, seed: int) -> np.ndarray | str:
    """The held-back row positions, in the training file's order; only rows with every answer
    cell filled can be graded, so only those are drawn."""
    rows = len(tables.train)
    size = slice_size(rows)
    if size == 0:
        return (f"the training file has {rows:,} rows; a slice is held back only from "
                f"{MIN_SLICE_ROWS * SLICE_FRACTION:,} rows on, below that the models need every row")
    answered = np.flatnonzero((tables.train[tables.answer_columns].fillna("") != "").all(axis=1).to_numpy())
    if len(answered) < size:
        return f"only {len(answered):,} training rows have every answer filled in, fewer than the {size:,} to hold back"
    rng = np.random.default_rng([seed, SLICE_STREAM])
    return np.sort(rng.choice(answered, size=size, replace=False))


def _write_view(task: LoadedTask, tables: _Tables, picked: np.ndarray, dest: Path) -> HiddenSlice:
    """Write the view (public data with the slice moved to the test side) and the slice's answers."""
    assert task.train_file and task.test_file and task.sample_submission
    if dest.exists() and any(dest.iterdir()):
        raise FileExistsError(f"{dest} is not empty; a hidden slice is drawn into a new directory")
    view = dest / "public"
    view.mkdir(parents=True)
    rewritten = {task.train_file.name, task.test_file.name, task.sample_submission.name}
    for path in sorted(task.public_dir.iterdir()):
        if path.name not in rewritten:
            shutil.copy2(path, view / path.name)
    held = tables.train.iloc[picked]
    held_ids = held[task.id_column]
    extra = tables.sample.iloc[[0] * len(held)].copy()
    extra[task.id_column] = held_ids.to_numpy()
    _write_csv(tables.train.drop(index=tables.train.index[picked]), view / task.train_file.name, task.train_file)
    _write_csv(pd.concat([tables.test, held[list(tables.test.columns)]]), view / task.test_file.name, task.test_file)
    _write_csv(pd.concat([tables.sample, extra]), view / task.sample_submission.name, task.sample_submission)
    _write_csv(held[tables.answer_columns], dest / "answers.csv")
    digest = hashlib.sha256("\n".join(sorted(held_ids)).encode("utf-8")).hexdigest()
    return HiddenSlice(view_dir=view, answers=dest / "answers.csv", rows=len(held),
                       of_rows=len(tables.train), ids_digest=digest)


def _write_csv(frame: pd.DataFrame, path: Path, like: Path | None = None) -> None:
    """Write ``frame`` beside ``path`` and move it into place, so a crash never leaves half a file.
    The file gets ``like``'s permissions (a sandboxed script runs as another user and must read
    the view as it reads the task's own files); without ``like`` only its owner can read it."""
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(handle)
    try:
        frame.to_csv(temp, index=False, lineterminator="\n")
        if like is not None:
            os.chmod(temp, stat.S_IMODE(like.stat().st_mode))
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def cut_hidden_rows(submission: Path, hidden: HiddenSlice, task: LoadedTask) -> HiddenGrade:
    """Take the held-back rows out of the submission a script wrote on the view and grade them.

    The rest of the file is written back in its order and text, so the submission the user gets
    never holds a held-back row; the cut rows go to ``<submission's grandparent>/hidden/
    predictions.csv`` for the audit trail. A missing or unreadable file, or one without the id
    column, is left alone and graded None."""
    submission = Path(submission)
    if not submission.is_file():
        return HiddenGrade(None, f"no submission at {submission} to grade the held-back rows on", 0)
    try:
        frame = _read_text(submission)
    except _UNREADABLE as exc:
        return HiddenGrade(None, f"the submission cannot be read as CSV: {exc}", 0)
    if task.id_column not in frame.columns:
        return HiddenGrade(None, f"the submission has no id column {task.id_column!r} to find the held-back rows by", 0)
    held_ids = set(_read_text(hidden.answers)[task.id_column].map(label_str))
    is_held = frame[task.id_column].map(label_str).isin(held_ids)
    if is_held.any():
        _write_csv(frame[~is_held], submission, submission)
    predictions = submission.parent.parent / "hidden" / "predictions.csv"
    predictions.parent.mkdir(parents=True, exist_ok=True)
    _write_csv(frame[is_held], predictions)
    return _grade(task, hidden, predictions, int(is_held.sum()))


def _grade(task: LoadedTask, hidden: HiddenSlice, predictions: Path, rows: int) -> HiddenGrade:
    """Grade the cut rows as a grader reads a submission (pandas' default types)."""
    try:
        score, problem = score_on_answers(task, hidden.answers, pd.read_csv(predictions))
    except (*_UNREADABLE, TaskError) as exc:
        return HiddenGrade(None, f"the held-back rows could not be graded: {exc}", rows)
    if score is None:
        return HiddenGrade(None, f"the held-back rows could not be graded: {problem}", rows)
    return HiddenGrade(score, "", rows)
