"""Scripted agents and a marker-driven evaluator for Phase 2 handler tests.

Scripts carry their own verdict: a line ``# score=<x>`` gives the score the evaluator reports
(``FAIL`` makes it crash, ``NONE`` makes it run without a score line); an ablation script
containing ``ABLATION_FAIL`` crashes. Agents answer from the request alone (its effect id and
variables), never from call order, so answers do not depend on how effects interleave.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from events.core import AgentCallCompleted, AgentCallFailed, AgentCallRequested, EvaluationRequested
from events.domain import EvaluationResult, PipelineConfig, SolutionPhase, SolutionScript
from handlers.deadline import Deadline
from handlers.mlestar.phase2 import phase2_result_json, run_phase2
from tests.support.sim import SimRun, error_result, make_task, ok_result, simulate

BLOCK = "model = LogisticRegression(C=1.0)  # score=0.80"
BASE = (
    "import pandas as pd\n"
    "from sklearn.linear_model import LogisticRegression\n"
    "X_train, y = load_data('./input')\n"
    "scaler = StandardScaler()\n"
    "X_train = scaler.fit_transform(X_train)\n"
    f"{BLOCK}\n"
    "model.fit(X_train, y)\n"
    "print('Final Validation Performance:', validate(model))\n"
)
ABLATION_STDOUT = "Baseline: 0.8196\nNo StandardScaler: 0.8102\nNo OneHotEncoder: 0.7886\n"

_IDS = re.compile(r"path-(\d+)/t(\d+)(?:/k(\d+))?")

Reply = AgentCallCompleted | AgentCallFailed | str | None
Override = Callable[[AgentCallRequested], Reply]


def where(req: AgentCallRequested | EvaluationRequested) -> tuple[int, int, int | None]:
    """(path, outer step, inner step or None) of an effect."""
    m = _IDS.search(req.effect_id)
    assert m, req.effect_id
    return int(m.group(1)), int(m.group(2)), None if m.group(3) is None else int(m.group(3))


def failed(error: str = "agent exploded") -> AgentCallFailed:
    return AgentCallFailed(effect_id="x", error=error)


def structured(data: dict[str, Any], text: str = "") -> AgentCallCompleted:
    return AgentCallCompleted(effect_id="x", text=text, structured=data)


def plans(*pairs: tuple[str, str]) -> AgentCallCompleted:
    return structured({"plans": [{"code_block": b, "plan": p} for b, p in pairs]})


def scored_line(solution: str) -> str:
    return next(line for line in solution.splitlines() if "# score=" in line)


class Agents:
    """Default answers for every Phase 2 role; ``overrides[role](req)`` may answer instead
    (returning None falls back to the default). ``score(path, t, k)`` drives the coder."""

    def __init__(self, score: Callable[[int, int, int], Any] | None = None, **overrides: Override) -> None:
        self.score = score or (lambda p, t, k: 0.81)
        self.overrides = overrides
        self.requests: list[AgentCallRequested] = []

    def __call__(self, req: AgentCallRequested) -> Reply:
        self.requests.append(req)
        role = req.agent_type + (f"_{req.variant}" if req.agent_type == "leakage" else "")
        fn = self.overrides.get(role)
        if fn is not None:
            out = fn(req)
            if out is not None:
                return out
        return getattr(self, role)(req)

    def of(self, role: str) -> list[AgentCallRequested]:
        return [r for r in self.requests if r.agent_type == role]

    # --- defaults ---------------------------------------------------------------------------
    def ablation(self, req: AgentCallRequested) -> str:
        return f"```python\n# ablation {req.effect_id}\nprint({ABLATION_STDOUT!r})\n```"

    def summarize(self, req: AgentCallRequested) -> str:
        return f"OneHotEncoder matters most ({req.effect_id})"

    def extractor(self, req: AgentCallRequested) -> AgentCallCompleted:
        return plans((scored_line(req.variables["solution_script"]), f"plan-0 of {req.effect_id}"))

    def coder(self, req: AgentCallRequested) -> str:
        p, t, k = where(req)
        return f"```python\nmodel = make_model('{req.effect_id}')  # score={self.score(p, t, k)}\n```"

    def planner(self, req: AgentCallRequested) -> str:
        return f"  plan of {req.effect_id}  "

    def leakage_detection(self, req: AgentCallRequested) -> AgentCallCompleted:
        return structured({"answers": [{"leakage_status": "No Data Leakage", "code_block": "x"}]})

    def leakage_correction(self, req: AgentCallRequested) -> str:
        return "```python\nfixed()\n```"

    def debugger(self, req: AgentCallRequested) -> str:
        code = req.variables["code"].replace("score=FAIL", "score=0.70").replace("ABLATION_FAIL", "ablation fixed")
        return f"```python\n{code}\n# debugged by {req.effect_id}\n```"


def evaluate(req: EvaluationRequested, code: str) -> EvaluationResult:
    if req.purpose == "ablation":
        return error_result() if "ABLATION_FAIL" in code else ok_result(None, stdout=ABLATION_STDOUT)
    marks = re.findall(r"# score=(\S+)", code)
    if not marks or marks[-1] == "FAIL":
        return error_result()
    if marks[-1] == "NONE":
        return ok_result(None, stdout="trained\n")
    return ok_result(float(marks[-1]))


def config(T: int = 2, K: int = 2, L: int = 1, **kw: Any) -> PipelineConfig:
    return PipelineConfig(outer_loop_steps=T, inner_loop_steps=K, num_parallel_solutions=L, **kw)


def run_phase2_sim(agents: Agents, *, cfg: PipelineConfig | None = None, direction: str = "maximize",
                   initial: float = 0.80, base: str = BASE, deadline_s: float | None = None,
                   order_seed: int | None = None, evaluator: Callable = evaluate,
                   seconds_per_result: float = 1.0) -> tuple[SimRun, list]:
    """Run Phase 2 alone from ``base`` (score ``initial``); returns the run and the Phase2Results."""
    out: list = []

    async def main(wf) -> None:
        s0 = SolutionScript(content=base, phase=SolutionPhase.merged, score=initial)
        wf.record_solution(base, phase=s0.phase, origin="test", parents=[])
        # ``deadline_s``: the soft end of Phase 2's window alone, so the paths' own soft-end checks are
        # what stops them (no request is refused at a hard end).
        results = await run_phase2(wf if deadline_s is None else wf.within(Deadline(deadline_s)), s0, initial)
        out.extend(results)
        wf.complete(submission_path="", best_score=results[0].best_score,
                    result={"phase2_results": [phase2_result_json(r) for r in results]})

    run = simulate(main, agent=agents, evaluate=evaluator, config=cfg or config(), task=make_task(direction),
                   order_seed=order_seed, seconds_per_result=seconds_per_result)
    assert run.failed is None, run.failed
    return run, out


def scoped(run: SimRun, cls: type, scope_prefix: str = "phase2/path-0") -> list:
    return [e for s, e in run.events if isinstance(e, cls) and s.startswith(scope_prefix)]
