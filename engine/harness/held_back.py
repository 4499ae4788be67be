"""The harness's part of a run's held-back slice (events/hidden.py, docs/final-choice-slice.md):
which data a script reads, and the held-back rows cut out of the submission it wrote and graded.

The search's scripts read the slice's view, in which the held-back rows sit in the test file
without their answers; finalization's test script (purpose ``submission``) reads the task's own
data, so the model submitted is fit on every training row and predicts only the real test rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

from events.core import TEST_SCRIPT_PURPOSE

if TYPE_CHECKING:
    from engine.grading.hidden_slice import HiddenGrade, HiddenSlice
    from engine.tasks.model import LoadedTask

log = structlog.get_logger(__name__)



@dataclass(frozen=True)
class HeldBack:
    """A run's slice and the task its held-back answers are graded by."""

    slice: HiddenSlice
    task: LoadedTask

    def reads_view(self, purpose: str) -> bool:
        """Whether a script evaluated for ``purpose`` reads the view (every search step) rather
        than the task's own data (finalization's test script)."""
        return purpose != TEST_SCRIPT_PURPOSE

    def full_rows_estimate(self, estimate_s: float | None) -> float | None:
        """A search script's estimate of its test version's run, for the test version that reads
        every training row (finalization's): the script saw all but the held-back ones, and a fit's
        time grows with its rows."""
        if estimate_s is None or self.slice.of_rows <= self.slice.rows:
            return estimate_s
        return estimate_s * self.slice.of_rows / (self.slice.of_rows - self.slice.rows)

    def protected(self) -> tuple[str, ...]:
        """What no script may read: the held-back answers."""
        return (str(self.slice.answers),)


def cut_and_grade(held_back: HeldBack, submission: Path) -> HiddenGrade:
    """Cut the held-back rows out of ``submission`` and grade them (``cut_hidden_rows``): the
    file left is what the script would have written for the real test rows alone."""
    from engine.grading.hidden_slice import cut_hidden_rows

    grade = cut_hidden_rows(submission, held_back.slice, held_back.task)
    log.info("harness.held_back.graded", score=grade.score, rows=grade.rows, reason=grade.reason or None)
    return grade


__all__ = ["HeldBack", "cut_and_grade"]
