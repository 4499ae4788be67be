"""One deadline style through the handlers: a unit of work's deadline is its workflow's
(``wf.deadline``), narrowed with ``wf.within``; no handler passes a deadline as a parameter.

The handlers are parsed, never imported: the test fails on a function of ``handlers/`` that takes
a ``deadline_s`` or ``end_s`` parameter (the second way a deadline used to travel, beside
``wf.deadline``), and on a ``deadline_of`` (the function that reconciled the two). The rest checks
the mechanism on a real runtime: ``within`` narrows and never loosens, ``Deadline(soft)`` narrows
the soft end alone, a workflow without a soft end paces its steps by the run's time limit while its
requests stay unbounded, and a request past the hard end is refused.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from events.core import AgentCallRequested, PhaseStarted
from events.domain import PipelineConfig
from handlers.deadline import Deadline, DeadlineReached
from handlers.toolkit import pacing_deadline, past, soft_budget_s, timeout_for
from tests.support.sim import ok_result, simulate

ROOT = Path(__file__).resolve().parents[2]
SECOND_WAYS = {"deadline_s", "end_s"}


def handler_functions() -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    found = []
    for path in sorted((ROOT / "handlers").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.append((str(path.relative_to(ROOT)), node))
    return found


def test_no_handler_function_takes_a_deadline_parameter():
    offenders = []
    for where, fn in handler_functions():
        args = fn.args
        names = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
        offenders += [f"{where}:{fn.lineno} {fn.name}({name})" for name in sorted(names & SECOND_WAYS)]
    assert not offenders, "a deadline travels on the workflow (wf.within), not as a parameter: " + ", ".join(offenders)


def test_no_function_reconciles_two_deadlines():
    assert not [f"{where}:{fn.lineno}" for where, fn in handler_functions() if fn.name == "deadline_of"]


def run(main: Any, *, time_limit: int = 1000) -> None:
    sim = simulate(main, agent=lambda request: None, evaluate=lambda *a, **k: ok_result(0.5),
                   config=PipelineConfig(time_limit_seconds=time_limit))
    assert sim.failed is None, sim.failed


def test_within_narrows_and_never_loosens():
    seen: dict[str, Deadline] = {}

    async def main(wf):
        phase = wf.within(Deadline(10.0, 12.0))
        seen["phase"] = phase.deadline
        seen["step"] = phase.within(Deadline(8.0)).deadline          # the soft end alone
        seen["looser"] = phase.within(Deadline(20.0, 30.0)).deadline  # asks for more: keeps its own
        seen["scoped"] = phase.at("phase2/path-0").deadline           # another scope, same deadline
        wf.complete(submission_path="", best_score=None, result={})

    run(main)
    assert seen["phase"] == Deadline(10.0, 12.0)
    assert seen["step"] == Deadline(8.0, 12.0)
    assert seen["looser"] == Deadline(10.0, 12.0)
    assert seen["scoped"] == Deadline(10.0, 12.0)


def test_a_workflow_without_a_soft_end_paces_by_the_time_limit_and_requests_unbounded():
    seen: dict[str, Any] = {}

    async def main(wf):
        seen["raw"], seen["pacing"] = wf.deadline, pacing_deadline(wf)
        seen["past"], seen["timeout"], seen["budget"] = past(wf), timeout_for(wf), soft_budget_s(wf)
        bounded = wf.within(Deadline(400.0, 420.0))
        seen["bounded"] = (pacing_deadline(bounded), soft_budget_s(bounded), timeout_for(bounded, 3600.0))
        wf.complete(submission_path="", best_score=None, result={})

    run(main, time_limit=1000)
    assert seen["raw"] == Deadline(None, None)
    assert seen["pacing"] == Deadline(1000.0, None)     # the run's time limit, as its soft end only
    assert seen["past"] is False and seen["timeout"] == 1000.0 and seen["budget"] is None
    assert seen["bounded"] == (Deadline(400.0, 420.0), 400.0, 400.0)


def test_a_request_past_the_hard_end_is_refused_and_none_is_recorded():
    seen: dict[str, Any] = {}

    async def main(wf):
        phase = wf.within(Deadline(0.0, 0.5))
        phase.record(PhaseStarted(phase="p", budget_s=soft_budget_s(phase)))
        with pytest.raises(DeadlineReached, match="hard end 0.5 s"):
            await phase.agent(AgentCallRequested(effect_id=phase.effect_id("a"), agent_type="coder", prompt="x"))
        seen["past"] = past(phase)
        wf.complete(submission_path="", best_score=None, result={})

    sim = simulate(main, agent=lambda request: None, evaluate=lambda *a, **k: ok_result(0.5),
                   config=PipelineConfig(time_limit_seconds=1000))
    assert sim.failed is None, sim.failed
    assert seen["past"] is True
    assert not sim.of(AgentCallRequested)
    assert [e.budget_s for e in sim.of(PhaseStarted)] == [0.0]
