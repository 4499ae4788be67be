"""MLE-bench's own grader, used instead of ours when the ``mlebench`` package is installed and
knows the task's competition (a task in MLE-bench's prepared layout:
``<data dir>/<competition id>/prepared/{public,private}``). Its numbers are the ones MLE-bench
results are reported with, so a campaign on MLE-bench tasks reproduces them exactly; anything
else (no package, another layout, an unknown competition) is graded by ``engine.grading.grader``.

MLE-bench is installed from its repository (``pip install -e mle-bench``), not PyPI.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.grading.grade_report import GradeReport
from engine.tasks.model import LoadedTask

# GradeReport fields MLE-bench's CompetitionReport.to_dict() also has (same names, same meaning).
_SHARED_FIELDS = ("score", "gold_threshold", "silver_threshold", "bronze_threshold", "median_threshold",
                  "any_medal", "gold_medal", "silver_medal", "bronze_medal", "above_median",
                  "submission_exists", "valid_submission", "is_lower_better")


def competition_root(task: LoadedTask) -> Path | None:
    """``<data dir>/<competition id>`` when the task is in MLE-bench's prepared layout."""
    public = Path(task.public_dir)
    if public.name == "public" and public.parent.name == "prepared":
        return public.parent.parent
    return None


def mlebench_competition(task: LoadedTask) -> Any | None:
    """MLE-bench's Competition for this task, or None (package missing, not its layout, unknown)."""
    root = competition_root(task)
    if root is None:
        return None
    try:
        from mlebench.registry import registry
    except ImportError:
        return None
    try:
        competition = registry.set_data_dir(root.parent).get_competition(root.name)
    except Exception:
        return None
    # Its grade_csv raises ("not prepared") when the answers are not where its config says: then
    # the task's answers are ours to find, as for any task directory.
    return competition if Path(competition.answers).is_file() else None


def grade_with_mlebench(task: LoadedTask, submission: Path, competition: Any) -> GradeReport:
    from mlebench.grade import grade_csv

    got = grade_csv(Path(submission), competition).to_dict()
    reason = None if got.get("valid_submission") else "MLE-bench's grader found the submission invalid"
    return GradeReport(competition_id=task.competition_id, metric=task.metric, grader="mlebench",
                       submission_path=str(submission), reason=reason,
                       **{k: got[k] for k in _SHARED_FIELDS if k in got})
