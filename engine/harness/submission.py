"""The submission file a script leaves in ``final/``: presence (REQ-EX-024/025) and validity
against the task's sample submission and the form its metric scores."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

import os
from pathlib import Path
from typing import Any

import structlog

from events.core import SubmissionInfo

log = structlog.get_logger(__name__)

SUBMISSION_FILENAME = "submission.csv"
_MAX_LISTED_IDS = 5


def _submission_path(working_dir: str | os.PathLike[str], expected_filename: str) -> Path:
    return (Path(working_dir) / "final" / expected_filename).resolve()


def verify_submission(working_dir: str | os.PathLike[str], expected_filename: str = SUBMISSION_FILENAME) -> bool:
    """REQ-EX-024: ``{working_dir}/final/{name}`` exists and is not empty."""
    path = _submission_path(working_dir, expected_filename)
    return path.is_file() and path.stat().st_size > 0


def _count_data_lines(path: Path) -> int:
    with open(path, "rb") as handle:
        lines = sum(1 for line in handle if line.strip())
    return max(lines - 1, 0)


def get_submission_info(
    working_dir: str | os.PathLike[str], expected_filename: str = SUBMISSION_FILENAME
) -> dict[str, Any]:
    """REQ-EX-025: ``exists``, absolute ``path``, ``size_bytes`` (0 if absent) and ``row_count``
    (non-blank lines minus the header; None if absent)."""
    path = _submission_path(working_dir, expected_filename)
    exists = path.is_file()
    return {
        "exists": exists,
        "path": str(path),
        "size_bytes": path.stat().st_size if exists else 0,
        "row_count": _count_data_lines(path) if exists else None,
    }


def _read_csv(path: Path) -> pd.DataFrame:
    import pandas as pd  # only when a submission is checked: the driver imports this module early

    # Everything as text: ids like "007" or 1.0 vs 1 must compare as written, not as parsed.
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def _describe(values: list[str]) -> str:
    shown = ", ".join(repr(v) for v in values[:_MAX_LISTED_IDS])
    more = f" and {len(values) - _MAX_LISTED_IDS} more" if len(values) > _MAX_LISTED_IDS else ""
    return shown + more


def check_submission(path: str | os.PathLike[str], sample_path: str | os.PathLike[str] | None,
                     metric: str | None = None) -> SubmissionInfo:
    """Read a submission and check it against the sample submission.

    Valid means: readable CSV, at least one row, the sample's columns (all present; extra
    columns are an error too, since graders reject them; order is not checked because graders
    match by name), the sample's row count, and exactly the sample's id values, where the id
    column is the sample's first column. Values are compared as text. With the task's ``metric``
    the prediction columns must also hold what it scores (numbers, probabilities in [0, 1], whole
    ratings for kappa, at most k labels for MAP@k: ``engine.tasks.metrics.form_problem``, the rule
    grading applies). Every failed check is named in ``reason`` (joined by "; "). Without a
    sample only readability and non-emptiness are checked.
    """
    p = Path(path).resolve()
    if not p.is_file():
        return SubmissionInfo(exists=False, path=str(p), valid=False, reason="submission file not found")
    try:
        frame = _read_csv(p)
    except Exception as exc:  # pandas raises many types for a malformed file
        return SubmissionInfo(exists=True, path=str(p), valid=False, reason=f"unreadable CSV: {exc}")
    columns = [str(c) for c in frame.columns]
    problems: list[str] = []
    if len(frame) == 0:
        problems.append("submission has no rows")
    if sample_path is not None:
        try:
            sample = _read_csv(Path(sample_path))
        except Exception as exc:
            problems.append(f"sample submission unreadable: {exc}")
        else:
            problems.extend(_compare_with_sample(frame, sample))
            if not problems and metric:
                problems.extend(_form_problems(frame, sample, metric))
    return SubmissionInfo(
        exists=True, path=str(p), rows=len(frame), columns=columns, valid=not problems, reason="; ".join(problems)
    )


def _compare_with_sample(frame: pd.DataFrame, sample: pd.DataFrame) -> list[str]:
    problems: list[str] = []
    expected = [str(c) for c in sample.columns]
    actual = [str(c) for c in frame.columns]
    missing = [c for c in expected if c not in actual]
    extra = [c for c in actual if c not in expected]
    if missing:
        problems.append(f"missing columns: {_describe(missing)}")
    if extra:
        problems.append(f"unexpected columns: {_describe(extra)}")
    if len(frame) != len(sample):
        problems.append(f"row count {len(frame)} != expected {len(sample)}")
    if expected and expected[0] in actual:
        id_col = expected[0]
        got = frame[id_col].tolist()
        want = sample[id_col].tolist()
        want_set, got_set = set(want), set(got)
        absent = [v for v in want if v not in got_set]
        unexpected = [v for v in got if v not in want_set]
        duplicates = len(got) - len(got_set)
        if absent:
            problems.append(f"{len(absent)} ids of the sample missing from column {id_col!r}: {_describe(absent)}")
        if unexpected:
            problems.append(f"{len(unexpected)} unexpected ids in column {id_col!r}: {_describe(unexpected)}")
        if duplicates:
            problems.append(f"{duplicates} duplicate ids in column {id_col!r}")
    return problems


def _form_problems(frame: pd.DataFrame, sample: pd.DataFrame, metric: str) -> list[str]:
    from engine.tasks.metrics import form_problem  # scikit-learn: only when a submission is checked

    targets = [str(c) for c in sample.columns[1:]]
    problem = form_problem(metric, frame, targets)
    return [problem] if problem else []
