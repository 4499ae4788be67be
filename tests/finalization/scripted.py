"""Scripted agents and evaluator for finalization tests.

A test script says what happens when it runs with a marker line ``# outcome: X``:

    valid     clean exit, a valid ./final/submission.csv
    error     a crash with a traceback
    no_file   clean exit, no submission file
    invalid   clean exit, a submission that does not match the sample (99 of 100 rows)

A_test's first script has outcome ``test_outcome`` ("nocode": A_test gives no code). Each
debugger call returns the next outcome of ``fixes``; when they run out the debugger fails.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from events.core import (
    AgentCallCompleted,
    AgentCallFailed,
    AgentCallRequested,
    EvaluationCompleted,
    EvaluationRequested,
    SubmissionInfo,
)
from events.domain import SolutionPhase, SolutionScript
from tests.support.sim import error_result, ok_result

SAMPLE_LINE = "df = df.sample(n=30000, random_state=42)"
VALIDATION = ("import pandas as pd\ndf = pd.read_csv('./input/train.csv')\n" + SAMPLE_LINE + "\n"
              "model.fit(df)\nprint('Final Validation Performance: 0.8')")


def validation_solution(content: str = VALIDATION, score: float | None = 0.8) -> SolutionScript:
    return SolutionScript(content=content, phase=SolutionPhase.ensemble, score=score)


def fenced(code: str) -> str:
    return f"```python\n{code}\n```"


def make_test_script(outcome: str, version: int = 0) -> str:
    return f"# test script v{version}\n# outcome: {outcome}\npredict_all_and_write_submission()"


def submission_path(req: EvaluationRequested) -> str:
    return f"/runs/sim/evals/{req.effect_id.replace('/', '_')}/final/submission.csv"


def evaluate_script(req: EvaluationRequested, code: str) -> Any:
    if not code.strip():
        return error_result("write_script rejected the script: empty code")
    if "# outcome: error" in code:
        return error_result("Traceback (most recent call last):\n  File \"t.py\", line 3\nKeyError: 'label'")
    path = submission_path(req)
    if "# outcome: valid" in code:
        sub = SubmissionInfo(exists=True, path=path, rows=100, columns=["id", "label"], valid=True)
    elif "# outcome: invalid" in code:
        sub = SubmissionInfo(exists=True, path=path, rows=99, columns=["id", "label"], valid=False,
                             reason="row count 99 differs from the sample's 100")
    elif "# outcome: no_file" in code:
        sub = SubmissionInfo(exists=False, path=path, valid=False, reason="submission file not found")
    else:   # a validation script: prints its score, writes nothing
        return ok_result(0.8)
    score = 0.81 if "# scores" in code else None
    result = ok_result(score, stdout="done\n")
    return EvaluationCompleted(effect_id=req.effect_id, result=result,
                               submission=sub if req.expect_submission else None)


@dataclass
class FinalAgent:
    extract: Any = ""                 # the extraction reply text; AgentCallFailed when "fail"
    remove: Any = ""                  # the removal reply text; AgentCallFailed when "fail"
    test_outcome: str = "valid"
    fixes: list[str] = field(default_factory=list)
    contamination: list[Any] = field(default_factory=list)   # per reference: a reply text or dict
    leaky_test: bool = False
    calls: list[AgentCallRequested] = field(default_factory=list)

    def of(self, agent_type: str, variant: str | None = None) -> list[AgentCallRequested]:
        return [c for c in self.calls if c.agent_type == agent_type and c.variant == variant]

    def __call__(self, req: AgentCallRequested):
        self.calls.append(req)
        fail = AgentCallFailed(effect_id=req.effect_id, error="agent unavailable")
        if req.agent_type == "test":
            if req.variant == "subsampling_extract":
                return fail if self.extract == "fail" else self.extract
            if req.variant == "subsampling_remove":
                return fail if self.remove == "fail" else self.remove
            if req.variant == "contamination":
                i = int(req.effect_id.rsplit("-", 1)[1])
                answer = self.contamination[i]
                if isinstance(answer, dict):
                    return AgentCallCompleted(effect_id=req.effect_id, text="", structured=answer)
                return answer
            assert req.variant is None
            if self.test_outcome == "nocode":
                return fail
            return "Here you go:\n" + fenced(make_test_script(self.test_outcome))
        if req.agent_type == "debugger":
            n = len([c for c in self.calls if c.agent_type == "debugger"])
            if n > len(self.fixes):
                return fail
            return fenced(make_test_script(self.fixes[n - 1], version=n))
        if req.agent_type == "leakage":
            code = req.variables["code"]
            if req.variant == "detection":
                leaky = self.leaky_test and "# outcome:" in code and "# leak fixed" not in code
                block = "predict_all_and_write_submission()"
                return AgentCallCompleted(effect_id=req.effect_id, text="", structured={"answers": [
                    {"leakage_status": "Yes Data Leakage" if leaky else "No Data Leakage", "code_block": block}]})
            return fenced("predict_all_and_write_submission()  # leak fixed")
        raise AssertionError(f"unexpected agent {req.agent_type}/{req.variant}")
