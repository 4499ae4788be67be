"""What grading a submission says: ``engine grade``'s report, whichever grader produced it."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict


class GradeReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    competition_id: str
    metric: str
    score: float | None = None
    gold_threshold: float | None = None
    silver_threshold: float | None = None
    bronze_threshold: float | None = None
    median_threshold: float | None = None
    any_medal: bool = False
    gold_medal: bool = False
    silver_medal: bool = False
    bronze_medal: bool = False
    above_median: bool = False
    submission_exists: bool
    valid_submission: bool
    is_lower_better: bool
    reason: str | None = None
    # Who graded: "engine" (engine/grading/grader.py) or "mlebench" (MLE-bench's own grader, when installed
    # and the task is one of its competitions; engine/grading/mlebench.py).
    grader: str = "engine"
    submission_path: str
    created_at: datetime | None = None
