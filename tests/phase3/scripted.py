"""Scripted agents and evaluator for Phase 3 tests: each round's outcome is decided up front.

An ensemble script "scores" what its `print('Final Validation Performance: X')` says and
fails when it contains `raise`, exactly as the harness would read a real run. Outcomes per
round (``Phase3Agent.rounds[r]``):

    float              the round's script scores that value
    None               the script fails and the debugger cannot help (it gives no new code)
    ("fixable", x)     the script fails once; the debugger's fix scores x
    "unfixable"        the script fails; every debugger fix fails again
    "planner_fail"     A_ens_planner's call fails (no plan)
    "planner_empty"    A_ens_planner answers with whitespace
    "ensembler_fail"   A_ensembler's call fails (no code)
    "ensembler_empty"  A_ensembler answers with an empty text
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from events.core import AgentCallCompleted, AgentCallFailed, AgentCallRequested, EvaluationRequested
from events.domain import EvaluationResult, SolutionPhase, SolutionScript
from tests.support.sim import error_result, ok_result

SCORE_RE = re.compile(r"Final Validation Performance: ([-0-9.eE]+|nan)")
ROUND_RE = re.compile(r"round-(\d+)/")


def fenced(code: str) -> str:
    return f"Here is the program:\n```python\n{code.rstrip(chr(10))}\n```\n"


def plan_text(r: int) -> str:
    return f"Plan {r}: average the predictions of all solutions with weights tuned in round {r}."


def ensemble_code(r: int, outcome: Any) -> str:
    head = f"# ensemble round {r}\n"
    if isinstance(outcome, float):
        return head + f"print('Final Validation Performance: {outcome}')"
    if isinstance(outcome, tuple):
        return head + f"raise ValueError('fixable {outcome[1]}')"
    return head + "raise ValueError('broken ensemble')"


def input_solutions(scores: list[float | None]) -> list[SolutionScript]:
    return [SolutionScript(content=f"# refined path {i}\nprint('Final Validation Performance: {s}')\n",
                           phase=SolutionPhase.refined, score=s) for i, s in enumerate(scores)]


def evaluate_script(req: EvaluationRequested, code: str) -> EvaluationResult:
    if "raise" in code:
        return error_result("Traceback (most recent call last):\n  File \"x.py\", line 2\n"
                            "ValueError: broken ensemble")
    m = SCORE_RE.search(code)
    return ok_result(float(m.group(1)) if m else None)


def round_of(req: AgentCallRequested) -> int:
    m = ROUND_RE.search(req.effect_id)
    assert m, req.effect_id
    return int(m.group(1))


@dataclass
class Phase3Agent:
    rounds: dict[int, Any]
    leaky: set[int] = field(default_factory=set)   # rounds whose script the leakage agent flags
    calls: list[AgentCallRequested] = field(default_factory=list)

    def of(self, agent_type: str, variant: str | None = None) -> list[AgentCallRequested]:
        return [c for c in self.calls if c.agent_type == agent_type and (variant is None or c.variant == variant)]

    def __call__(self, req: AgentCallRequested):
        self.calls.append(req)
        t = req.agent_type
        if t == "ens_planner":
            r = round_of(req)
            outcome = self.rounds.get(r, 0.5)
            if outcome == "planner_fail":
                return AgentCallFailed(effect_id=req.effect_id, error="planner unavailable")
            if outcome == "planner_empty":
                return "   \n"
            return plan_text(r)
        if t == "ensembler":
            r = round_of(req)
            outcome = self.rounds.get(r, 0.5)
            if outcome == "ensembler_fail":
                return AgentCallFailed(effect_id=req.effect_id, error="ensembler unavailable")
            if outcome == "ensembler_empty":
                return ""
            return fenced(ensemble_code(r, outcome))
        if t == "leakage":
            return self._leakage(req)
        if t == "debugger":
            code = req.variables["code"]
            m = re.search(r"raise ValueError\('fixable ([-0-9.eE]+)'\)", code)
            if m:
                return fenced(code.replace(m.group(0), f"print('Final Validation Performance: {m.group(1)}')")
                              + "\n# debugged")
            r = int(re.search(r"# ensemble round (\d+)", code).group(1))  # type: ignore[union-attr]
            if self.rounds.get(r) == "unfixable":
                n = len(self.of("debugger"))
                return fenced(code + f"\n# debug attempt {n}, still broken")
            return AgentCallFailed(effect_id=req.effect_id, error="cannot fix")
        raise AssertionError(f"unexpected agent {t}")

    def _leakage(self, req: AgentCallRequested):
        code = req.variables["code"]
        m = re.search(r"# ensemble round (\d+)", code)
        leaky = m is not None and int(m.group(1)) in self.leaky and "# leak fixed" not in code
        if req.variant == "detection":
            status = "Yes Data Leakage" if leaky else "No Data Leakage"
            block = m.group(0) if m else code.splitlines()[0]
            return AgentCallCompleted(effect_id=req.effect_id, text="", structured={"answers": [
                {"leakage_status": status, "code_block": block}]})
        assert m is not None
        return fenced(m.group(0) + " # leak fixed\n")
