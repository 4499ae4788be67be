"""The simulated day of bench_longrun.py: the real strategies on the simulated clock, answered by the
scripted worlds of the handler tests with answers of a real run's size.

Durations are drawn per effect from one seed (as in tests/core/test_time_plan_property.py): an
agent call up to 3 minutes, an evaluation up to 20 minutes, one in twenty ten times longer (an
evaluation past its timeout is killed there). Every whole script an agent writes is padded with
comment lines to a size drawn in 5-30 KB, and every evaluation's output to 2-6 KB of training
log, so the log holds what a real run's does: copies of scripts in prompts, answers and solutions.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from events.base import NewEvent
from events.core import AgentCallCompleted, AgentCallRequested, EvaluationCompleted, EvaluationRequested
from events.domain import EvaluationResult, PipelineConfig

AGENT_MAX_S, EVAL_MAX_S = 180.0, 1200.0
SCRIPT_KB = (5, 30)
OUTPUT_KB = (2, 6)
FENCE = "```python\n"


@dataclass
class Batch:
    at_s: float             # when its input arrived on the run's clock
    events: list[NewEvent]  # the input and the decisions it caused: one commit


@dataclass
class SimulatedRun:
    run_id: str
    batches: list[Batch]


def draw(key: str, longest: float) -> float:
    rng = random.Random(f"longrun:{key}")
    took = rng.uniform(0.0, longest)
    return took * 10 if rng.random() < 0.05 else took


def durations(req: Any) -> float | None:
    if isinstance(req, AgentCallRequested):
        return draw(req.effect_id, AGENT_MAX_S)
    if isinstance(req, EvaluationRequested):
        return min(draw(req.effect_id, EVAL_MAX_S), req.timeout_s)
    return None


def padded_script(text: str, key: str) -> str:
    """A whole script in the answer (one that prints its score, or has the gene sections) grown to
    a drawn size with comment lines; a one-line code block replacement stays as it is."""
    start = text.find(FENCE)
    end = text.find("```", start + len(FENCE)) if start >= 0 else -1
    if end < 0:
        return text
    code = text[start + len(FENCE):end]
    if "Final Validation Performance" not in code and "[SECTION:" not in code:
        return text
    want = random.Random(f"size:{key}").randint(*SCRIPT_KB) * 1024
    lines: list[str] = []
    size = len(code)
    while size < want:
        lines.append(f"# note {len(lines) + 1:04d} ({key[-24:]}): feature engineering idea kept for reference, unused")
        size += len(lines[-1]) + 1
    return text[:start + len(FENCE)] + code.rstrip("\n") + "\n" + "\n".join(lines) + "\n" + text[end:]


def padded_output(result: EvaluationResult, key: str) -> EvaluationResult:
    want = random.Random(f"out:{key}").randint(*OUTPUT_KB) * 1024
    lines: list[str] = []
    size = 0
    while size < want:
        n = len(lines) + 1
        lines.append(f"[fold {n % 5}] epoch {n:04d} train_loss {1 / (n + 1):.6f} valid_loss {1.1 / (n + 1):.6f}")
        size += len(lines[-1]) + 1
    return result.model_copy(update={"stdout": "\n".join(lines) + "\n" + result.stdout})


def agent_of(answer: Any) -> Any:
    def call(req: AgentCallRequested) -> Any:
        out = answer(req)
        if isinstance(out, str):
            return padded_script(out, req.effect_id)
        if isinstance(out, AgentCallCompleted) and out.text:
            return out.model_copy(update={"text": padded_script(out.text, req.effect_id)})
        return out
    return call


def evaluator_of(evaluate: Any) -> Any:
    def run(req: EvaluationRequested, code: str) -> EvaluationCompleted:
        out = evaluate(req, code)
        done = out if isinstance(out, EvaluationCompleted) else EvaluationCompleted(effect_id=req.effect_id, result=out)
        took = draw(req.effect_id, EVAL_MAX_S)
        if took > req.timeout_s:
            return EvaluationCompleted(effect_id=req.effect_id, result=EvaluationResult(
                score=None, stdout="", stderr=f"timed out after {req.timeout_s:.0f} s", exit_code=124,
                duration_seconds=req.timeout_s, is_error=True))
        result = padded_output(done.result, req.effect_id).model_copy(update={"duration_seconds": took})
        return done.model_copy(update={"result": result})
    return run


def simulate_day(strategy: str, limit_s: int) -> SimulatedRun:
    """The whole run of ``strategy`` ("mle-star" or "evolve") within ``limit_s``, as commits."""
    from tests.evolution.scripted import World
    from tests.evolution.scripted import evaluate as evolve_evaluate
    from tests.pipeline import scripted_agent as sa
    from tests.support.sim import simulate_clock

    if strategy == "mle-star":
        from handlers.mlestar.pipeline import main
        # A day's worth of refinement: more outer and inner steps than the paper's 4 x 4.
        config = PipelineConfig(time_limit_seconds=limit_s, outer_loop_steps=12, inner_loop_steps=8,
                                ensemble_rounds=10)
        agent, evaluate = agent_of(sa.answer), evaluator_of(sa.evaluate)
    else:
        from handlers.evolution import main
        config = PipelineConfig(time_limit_seconds=limit_s, max_steps=100_000, phase1_target_nodes=8,
                                steps_per_epoch=10, workers=2, tournament_size=3)
        agent, evaluate = agent_of(World()), evaluator_of(evolve_evaluate)
    run = simulate_clock(main, agent=agent, evaluate=evaluate, config=config, durations=durations,
                         max_steps=2_000_000)
    return SimulatedRun(run_id=f"longrun-{strategy}", batches=batches_of(run.events))


def batches_of(events: list[tuple[str, Any]]) -> list[Batch]:
    """One commit per input and the decisions it caused (the start and its decisions first); a
    result is recorded in its request's scope, as the driver records it."""
    scopes: dict[str, str] = {}
    batches: list[Batch] = []
    for scope, event in events:
        if isinstance(event, (AgentCallRequested, EvaluationRequested)) or hasattr(event, "at_elapsed_s"):
            scopes[event.effect_id] = scope
        if scope == "input" or not batches:
            at = float(getattr(event, "elapsed_s", 0.0) or 0.0)
            scope = scopes.get(getattr(event, "effect_id", ""), "run") if scope == "input" else scope
            batches.append(Batch(at_s=at, events=[]))
        batches[-1].events.append(NewEvent(event=event, scope=scope))
    return batches


__all__ = ["Batch", "SimulatedRun", "simulate_day"]
