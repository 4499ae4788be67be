"""How a strategy's run ends: completed with its submission, or a named failure of the final step.

A run is called *completed* only when it leaves a submission the engine checked against the task's
sample (its ids, its columns, the form the metric scores). When the final step and every fallback
left none (a two-target task whose scripts predict one target, a test script that never writes
its file), the run fails with the final step's reason instead: a user must never read "completed"
over a task that has nothing to submit. The best solution found stays in the log, with its lineage.

Runs created before this rule keep completing without a submission (the named patch below), so
a run recorded by an earlier release replays and resumes as it was recorded.
"""

from __future__ import annotations

from typing import Any

from events.errors import PipelineError
from handlers.workflow import Workflow

NO_SUBMISSION_FAILS = "run-without-submission-fails"


def end_run(wf: Workflow, *, submission_path: str, best_score: float | None, result: dict[str, Any],
            fallback_reason: str | None) -> None:
    """Complete the run with ``submission_path``, or fail it by name when there is none."""
    if not submission_path and wf.patched(NO_SUBMISSION_FAILS):
        why = f": {fallback_reason}" if fallback_reason else ""
        raise PipelineError(
            f"the final step left no valid submission{why}. The best solution found (validation score "
            f"{best_score}) is in the run's log: `engine lineage` shows it",
            {"stage": "final", "best_score": best_score, "fallback_reason": fallback_reason or ""})
    wf.complete(submission_path=submission_path, best_score=best_score, result=result)
