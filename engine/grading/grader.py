"""Grade a submission CSV against a task's private answers, MLE-bench style.

``grade_submission`` never raises for a bad submission: a missing file, a malformed CSV,
wrong or duplicate ids, missing columns or non-numeric predictions all give a report with
``valid_submission=False`` and the reason. It raises ``TaskError`` only when the *task* cannot
be graded (no answers, an unknown metric, answers that do not fit the metric).

Medals follow Kaggle: reaching a threshold (ties included) earns it; ``above_median`` is
strictly better than the median.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import TypedDict

import pandas as pd

from engine.grading.grade_report import GradeReport
from engine.grading.mlebench import grade_with_mlebench, mlebench_competition
from engine.tasks.layout import plain_folder_answers_message
from engine.tasks.metrics import SubmissionError, metric_info, score_predictions
from engine.tasks.model import Leaderboard, LoadedTask, TaskError, label_str
from events.domain import MetricDirection
from events.score import Score, usable

_EXAMPLES = 3  # how many offending ids a reason quotes


class _ReportHead(TypedDict):
    """The fields every report on one submission shares, valid or not."""

    competition_id: str
    metric: str
    gold_threshold: float | None
    silver_threshold: float | None
    bronze_threshold: float | None
    median_threshold: float | None
    is_lower_better: bool
    submission_path: str
    created_at: datetime


def _ids(series: pd.Series) -> pd.Series:
    # Ids compare as normalised text, so 7, 7.0 and "7" are one id.
    return series.map(label_str)


def _shape_problem(task: LoadedTask, sub: pd.DataFrame, answers: pd.DataFrame) -> str | None:
    """Why ``sub`` cannot be matched row for row with the answers, or None if it can."""
    id_col = task.id_column
    missing = [c for c in (id_col, *task.target_columns) if c not in sub.columns]
    if missing:
        return f"missing column(s) {missing}; expected {[id_col, *task.target_columns]}"
    if len(sub) != len(answers):
        return f"expected {len(answers)} rows, got {len(sub)}"
    if sub[id_col].isna().any():
        return f"{int(sub[id_col].isna().sum())} row(s) have an empty {id_col!r}"
    ids = _ids(sub[id_col])
    duplicated = ids[ids.duplicated()].unique().tolist()
    if duplicated:
        return f"{len(duplicated)} duplicate id(s), e.g. {duplicated[:_EXAMPLES]}"
    expected = set(_ids(answers[id_col]))
    unknown = sorted(set(ids) - expected)
    if unknown:
        absent = sorted(expected - set(ids))
        return (f"{len(unknown)} id(s) not in the test set, e.g. {unknown[:_EXAMPLES]}; "
                f"missing ids, e.g. {absent[:_EXAMPLES]}")
    return None


def _no_answers(task: LoadedTask) -> TaskError:
    """Why there is nothing to grade on, with the fix for the task's layout: a plain folder is the
    scripts' ./input as a whole, so answers there (private/ included) are never read, and naming
    them in task.yaml cannot help; only the split layout holds answers."""
    if task.public_dir == task.root:
        private = task.root / "private"
        if private.is_dir() and any(private.iterdir()):
            return TaskError(plain_folder_answers_message(task.root, private) + "; then grade again")
        return TaskError(
            f"task {task.competition_id} has no private answers: {task.root} is a plain task folder, "
            f"whose every file the scripts read as ./input, so it cannot hold them; to grade, move the "
            f"data files into {task.root / 'public'} and put the answers in "
            f"{task.root / 'private' / 'answers.csv'} (docs/tasks.md)"
        )
    return TaskError(
        f"task {task.competition_id} has no private answers (looked for private/answers.csv, "
        f"or a single CSV in private/ as MLE-bench prepares them, under {task.root}); it cannot be graded; "
        "name the file with `answers:` in task.yaml"
    )


def _read_answers(task: LoadedTask, path: Path | None = None) -> pd.DataFrame:
    """The task's private answers, or ``path`` when given (another answers file in their shape)."""
    path = path if path is not None else task.answers
    if path is None:
        raise _no_answers(task)
    try:
        answers = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise TaskError(f"{path}: cannot read the answers: {exc}") from exc
    if task.id_column not in answers.columns:
        raise TaskError(f"{path}: no id column {task.id_column!r}")
    return answers


def _score_aligned(task: LoadedTask, answers: pd.DataFrame, sub: pd.DataFrame) -> tuple[float | None, str]:
    """``sub``'s score against ``answers`` with the task's metric, or None and why it cannot be
    scored; the one place shape checks, row alignment and scoring happen, whatever the answers."""
    problem = _shape_problem(task, sub, answers)
    if problem:
        return None, problem
    # Put the submission in the answers' row order so the metric compares like with like.
    keyed = sub.set_axis(_ids(sub[task.id_column]), axis=0)
    aligned = keyed.loc[_ids(answers[task.id_column])].reset_index(drop=True)
    try:
        return score_predictions(task.scoring, answers, aligned), ""
    except SubmissionError as exc:
        return None, str(exc)


def score_on_answers(task: LoadedTask, answers: Path, submission: pd.DataFrame) -> tuple[float | None, str]:
    """Grade ``submission`` against the answers file ``answers`` instead of the task's own, by the
    task's metric and rules: how rows held back from the training file are graded after a run
    predicted them. ``(score, "")``, or ``(None, reason)`` for a submission that cannot be scored;
    raises ``TaskError`` when the answers cannot be read or do not fit the metric."""
    return _score_aligned(task, _read_answers(task, Path(answers)), submission)


def grade_submission(task: LoadedTask, submission: Path | str) -> GradeReport:
    competition = mlebench_competition(task)
    if competition is not None:
        return grade_with_mlebench(task, Path(submission), competition)
    info = metric_info(task.metric)
    answers = _read_answers(task)
    board = task.leaderboard
    submission = Path(submission)
    report = _ReportHead(
        competition_id=task.competition_id,
        metric=info.name,
        gold_threshold=board.gold,
        silver_threshold=board.silver,
        bronze_threshold=board.bronze,
        median_threshold=board.median,
        is_lower_better=info.direction == MetricDirection.minimize,
        submission_path=str(submission),
        created_at=datetime.now(timezone.utc),
    )

    def invalid(reason: str, exists: bool = True) -> GradeReport:
        return GradeReport(**report, submission_exists=exists, valid_submission=False,
                           reason=reason)

    if not submission.is_file():
        return invalid(f"submission file not found: {submission}", exists=False)
    try:
        sub = pd.read_csv(submission)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        return invalid(f"cannot read the submission as CSV: {exc}")
    score, problem = _score_aligned(task, answers, sub)
    if score is None:
        return invalid(problem)

    return GradeReport(**report, **_medals(Score(info.direction), score, board), score=score,
                       submission_exists=True, valid_submission=True)


class _Medals(TypedDict):
    any_medal: bool
    gold_medal: bool
    silver_medal: bool
    bronze_medal: bool
    above_median: bool


def _medals(rule: Score, score: float, board: Leaderboard) -> _Medals:
    """The medal a score earns on the task's leaderboard, and whether it beats the median."""
    def reaches(threshold: float | None) -> bool:
        # A threshold is a score: reaching it, ties included, earns the medal (as on Kaggle);
        # a task without that threshold awards nothing.
        return usable(threshold) and rule.at_least(score, threshold)

    gold = reaches(board.gold)
    silver = reaches(board.silver) and not gold
    bronze = reaches(board.bronze) and not (gold or silver)
    return _Medals(any_medal=gold or silver or bronze, gold_medal=gold, silver_medal=silver, bronze_medal=bronze,
                   above_median=usable(board.median) and rule.improves(score, board.median))  # strictly, as MLE-bench
