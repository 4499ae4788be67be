"""A scripted agent for Phase 1 tests: scores are encoded in the scripts it writes.

A script "scores" what its `print('Final Validation Performance: X')` says; a script
containing `raise` fails. Evaluation answers from that, exactly as a real run would read it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from events.core import AgentCallCompleted, AgentCallFailed, AgentCallRequested, EvaluationRequested
from events.domain import EvaluationResult
from tests.support.sim import error_result, ok_result

SCORE_RE = re.compile(r"Final Validation Performance: ([-0-9.eE]+)")


def script(score: float | None, tag: str = "") -> str:
    if score is None:
        return f"# {tag}\nraise ValueError('broken {tag}')\n"
    return f"# {tag}\nprint('Final Validation Performance: {score}')\n"


def fenced(code: str) -> str:
    return f"Here it is:\n```python\n{code}```\n"


def evaluate_script(req: EvaluationRequested, code: str) -> EvaluationResult:
    if "raise" in code:
        return error_result(f"Traceback (most recent call last):\n  File \"{req.solution_id}.py\"\nValueError: broken")
    m = SCORE_RE.search(code)
    return ok_result(float(m.group(1)) if m else None)


@dataclass
class Phase1Agent:
    """candidate_scores[i] is model i's draft score (None = broken); merge_scores in merge order
    (None = broken merge, "nocode" = merger fails)."""

    candidate_scores: list[float | None]
    merge_scores: list[float | None | str] = field(default_factory=list)
    data_reply: Callable[[str], str] | None = None
    leaky: set[str] = field(default_factory=set)  # tags whose scripts the leakage agent flags
    calls: list[AgentCallRequested] = field(default_factory=list)

    def __call__(self, req: AgentCallRequested):
        self.calls.append(req)
        t = req.agent_type
        if t == "retriever":
            models = [{"model_name": f"model-{i}", "example_code": "fit()"} for i in range(len(self.candidate_scores))]
            return AgentCallCompleted(effect_id=req.effect_id, text="", structured={"models": models})
        if t == "init":
            i = int(req.variables["model_name"].split("-")[1])
            return fenced(script(self.candidate_scores[i], f"cand-{i}"))
        if t == "merger":
            n = sum(1 for c in self.calls if c.agent_type == "merger") - 1
            outcome = self.merge_scores[n] if n < len(self.merge_scores) else None
            if outcome == "nocode":
                return AgentCallFailed(effect_id=req.effect_id, error="merger unavailable")
            return fenced(script(outcome, f"merge-{n}"))  # type: ignore[arg-type]
        if t == "leakage":
            code = req.variables["code"]
            if req.variant == "detection":
                hit = next((tag for tag in self.leaky if f"# {tag}\n" in code), None)
                if hit and "# fixed" not in code:
                    return AgentCallCompleted(effect_id=req.effect_id, text="", structured={"answers": [
                        {"leakage_status": "Yes Data Leakage", "code_block": f"# {hit}\n"}]})
                return AgentCallCompleted(effect_id=req.effect_id, text="", structured={"answers": [
                    {"leakage_status": "No Data Leakage", "code_block": code.splitlines()[0]}]})
            hit = next(tag for tag in self.leaky if f"# {tag}\n" in code)
            return fenced(f"# {hit}\n# fixed\n")
        if t == "data":
            if self.data_reply is not None:
                return self.data_reply(req.variables["initial solution"])
            return "All the provided information is used."
        if t == "debugger":
            return AgentCallFailed(effect_id=req.effect_id, error="cannot fix")
        raise AssertionError(f"unexpected agent {t}")
