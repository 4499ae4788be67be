"""A strategy that evaluates one script printing the environment it was given (issue 61, item 9)."""

from __future__ import annotations

from events.core import PhaseCompleted, PhaseStarted

PRINT_ENVIRONMENT = """
import json, os
print("ENV " + json.dumps(dict(os.environ), sort_keys=True))
print("Final Validation Performance: 0.5")
"""


async def main(wf) -> None:
    wf = wf.at("environment")
    wf.record(PhaseStarted(phase="environment"))
    sid = wf.record_solution(PRINT_ENVIRONMENT, phase="init", origin="init", parents=[])
    done = await wf.evaluate(sid, name="print-env", purpose="candidate", timeout_s=60)
    wf.record(PhaseCompleted(phase="environment", result={}))
    wf.complete(submission_path="", best_score=done.result.score, result={})
