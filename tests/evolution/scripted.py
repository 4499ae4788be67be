"""A scripted world for evolution tests: solutions whose score is the sum of their genes.

Every non-stub section carries one line ``w = <float>  # <tag>``; a script's validation score is
the sum of its ``w`` values, so merging good genes gives a good child, exactly the structure
the search exploits. ``raise RuntimeError('bug')`` lines make a script fail; the scripted
debugger removes ONE such line per attempt (so a script with n bug lines needs n attempts and
the chain must hand each attempt the previous attempt's code). ``# NO_SCORE`` makes a script
print no score. Draft outcomes are chosen per step by ``DraftScript.outcome(step)``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
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
from events.domain import EvaluationResult
from handlers.evolution.genes import LOCI, parse_genes
from tests.support.sim import error_result, ok_result

W_RE = re.compile(r"^w = ([-0-9.eE]+)", re.M)
STEP_RE = re.compile(r"step-(\d+)/")
BUG = "raise RuntimeError('bug')"
STUB_LOCI = ("LOSS", "OPTIMIZER", "INITIALIZATION")


def fenced(code: str) -> str:
    return f"Here it is:\n```python\n{code.rstrip()}\n```\n"


def make_code(tag: str, weights: dict[str, float], *, bugs: int = 0, no_score: bool = False,
              markers: tuple[str, ...] = LOCI) -> str:
    parts = [f"import math  # {tag}\n"]
    for locus in markers:
        parts.append(f"# [SECTION: {locus}]")
        if locus in STUB_LOCI and locus not in weights:
            parts.append("# not applicable")
        else:
            parts.append(f"w = {weights.get(locus, 0.0)!r}  # {tag} {locus.lower()} gene body")
        if locus == "TRAINING_TRICKS":
            parts.extend([BUG] * bugs)
            if no_score:
                parts.append("# NO_SCORE")
        parts.append("")
    return "\n".join(parts)


def score_of(code: str) -> float:
    return round(sum(float(x) for x in W_RE.findall(code)), 6)


def evaluate(req: EvaluationRequested, code: str) -> EvaluationResult | EvaluationCompleted:
    if BUG in code:
        return error_result("Traceback (most recent call last):\n  File \"s.py\", line 9\n"
                            f"RuntimeError: bug ({code.count(BUG)} bug lines left)")
    result = ok_result(None, stdout="done\n") if "# NO_SCORE" in code else ok_result(score_of(code))
    if req.effect_id.startswith("final/"):  # a clean test script writes its submission, as a real one does
        path = f"/runs/sim/evals/{req.effect_id.replace('/', '__')}/final/submission.csv"
        return EvaluationCompleted(effect_id=req.effect_id, result=result, submission=SubmissionInfo(
            exists=True, path=path, rows=10, columns=["id", "label"], valid=True))
    return result


def step_of(req: AgentCallRequested) -> int:
    m = STEP_RE.search(req.effect_id)
    assert m, req.effect_id
    return int(m.group(1))


@dataclass
class World:
    """The scripted agent. ``draft_outcome(step)`` -> dict(weights=..., bugs=..., no_score=...,
    nocode=..., markers=...); ``buggy_review(step)`` flags a node buggy; ``review_metric`` is the
    metric the review claims to have read in the output."""

    draft_outcome: Callable[[int], dict[str, Any]] = lambda step: {}
    mutate_delta: float = 0.05
    merge_bugs: int = 0
    mutate_bugs: int = 0
    buggy_review: Callable[[int], bool] = lambda step: False
    review_metric: float | None = None
    fail_roles: tuple[str, ...] = ()
    calls: list[AgentCallRequested] = field(default_factory=list)

    def of(self, agent_type: str) -> list[AgentCallRequested]:
        return [c for c in self.calls if c.agent_type == agent_type]

    def __call__(self, req: AgentCallRequested) -> AgentCallCompleted | AgentCallFailed | str:
        self.calls.append(req)
        t, v = req.agent_type, req.variables
        if t in self.fail_roles:
            return AgentCallFailed(effect_id=req.effect_id, error=f"scripted {t} failure")
        if t == "draft":
            step = step_of(req)
            o = self.draft_outcome(step)
            if o.get("nocode"):
                return "I cannot write code today."
            weights = o.get("weights") or {"DATA": 0.1 + 0.01 * step, "MODEL": 0.2, "REGULARIZATION": 0.05,
                                            "TRAINING_TRICKS": 0.05}
            return fenced(make_code(f"draft{step}", weights, bugs=o.get("bugs", 0), no_score=o.get("no_score", False),
                                    markers=o.get("markers", LOCI)))
        if t == "merge":
            primary = parse_genes(v["primary_code"])
            body = [primary.preamble.rstrip("\n") + "\n"]
            for locus in LOCI:
                body.append(f"# [SECTION: {locus}]\n{v['gene_plan'][locus]['code']}\n")
                if locus == "TRAINING_TRICKS":
                    body.extend([BUG + "\n"] * self.merge_bugs)
            return fenced("\n".join(body))
        if t == "mutate":
            genes = parse_genes(v["code"])
            locus = v["target_locus"]
            old = genes.bodies[locus]
            m = W_RE.search(old)
            new = (f"w = {round(float(m.group(1)) + self.mutate_delta, 6)!r}  # mutated {locus.lower()}"
                   if m else f"w = {self.mutate_delta!r}  # mutated {locus.lower()}")
            code = v["code"].replace(old, new + ("\n" + "\n".join([BUG] * self.mutate_bugs) if self.mutate_bugs else ""), 1)
            return fenced(code)
        if t == "evo_debug":
            code = v["code"]
            if BUG in code:
                code = code.replace(BUG + "\n", "", 1) if BUG + "\n" in code else code.replace(BUG, "", 1)
            else:
                code = code.replace("# NO_SCORE", "")
                genes = parse_genes(code)
                if not genes.valid:  # restore the missing markers with zero genes
                    code = make_code("fixed", dict.fromkeys(("DATA",), 0.0), markers=LOCI)
            return fenced(code)
        if t == "review":
            step = step_of(req)
            tag = re.search(r"# (\S+)", v["code"]).group(1)
            data = {"approach_tag": f"approach {tag}", "summary": f"summary of step {step}",
                    "is_buggy": self.buggy_review(step), "metric": self.review_metric}
            return AgentCallCompleted(effect_id=req.effect_id, text=json.dumps(data), structured=data)
        if t == "profile_evolver":
            return f"draft: rewritten at {req.effect_id}\nmerge: keep skeleton\nmutate: small steps"
        if t == "test":
            return fenced("print('test script')")
        if t == "leakage":
            return AgentCallFailed(effect_id=req.effect_id, error="no leakage agent in this world")
        return AgentCallFailed(effect_id=req.effect_id, error=f"unscripted role {t}")
