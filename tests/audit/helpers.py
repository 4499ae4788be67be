"""Helpers for the audit tests: the real ``engine`` CLI in subprocesses, simulated runs stored
in a real SQLite store, and a tiny strategy whose decision depends on a threshold."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from events.base import NewEvent
from events.core import EffectResult
from events.domain import PipelineConfig
from store.sqlite import SQLiteEventStore

REPO = Path(__file__).resolve().parents[2]
TOY_TASK = REPO / "tests" / "toy" / "task"
SCRIPTED_AGENT = "tests.pipeline.scripted_agent:ScriptedBackend"
ECHO_AGENT = "tests.toy.strategy:EchoBackend"


def engine(*args: str | Path, extra_path: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("ENGINE_DB", None)
    paths = ([str(extra_path)] if extra_path else []) + [str(REPO)]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # a rewritten temp strategy must never load from a stale .pyc
    return subprocess.run([sys.executable, "-m", "engine.cli", *map(str, args)], env=env, capture_output=True,
                          text=True, timeout=timeout, cwd=REPO, stdin=subprocess.DEVNULL)


def quick_config(**overrides) -> PipelineConfig:
    from engine.config.presets import build_config

    return build_config(preset="quick", config_file=None, overrides=[f"{k}={v}" for k, v in overrides.items()],
                        extra={})


def store_sim_run(db: Path, run_id: str, sim) -> SQLiteEventStore:
    """Write a ``tests.support.sim`` run into a real store, results scoped like their requests."""
    store = SQLiteEventStore(db)
    store.create_run(run_id, strategy="mle-star", task="sim-task")
    scope_of: dict[str, str] = {}
    batch: list[NewEvent] = []
    for scope, event in sim.events:
        effect = getattr(event, "effect_id", None)
        if isinstance(event, EffectResult):
            scope = scope_of.get(effect, "run")
        elif effect is not None:
            scope_of.setdefault(effect, scope)
        batch.append(NewEvent(event=event, scope=scope))
    store.append(run_id, batch, expected_seq=0)
    return store


THRESHOLD_STRATEGY = '''"""A temp strategy for the rerun tests: one draft, one evaluation, one verdict by threshold."""
from events.core import AgentCallRequested, Note, PhaseCompleted, PhaseStarted, SolutionEvaluated

THRESHOLD = {threshold}
CODE = "print('Final Validation Performance: 0.5')\\n"


async def main(wf):
    wf = wf.at("tmp")
    wf.record(PhaseStarted(phase="tmp"))
    await wf.agent(AgentCallRequested(effect_id=wf.effect_id("draft"), agent_type="toy", prompt="write a model"))
    sid = wf.record_solution(CODE, phase="init", origin="init", parents=[], source_model="toy-model")
    done = await wf.evaluate(sid, name="eval", purpose="candidate", timeout_s=60)
    score = done.result.score
    wf.record(SolutionEvaluated(solution_id=sid, requested_solution_id=sid, score=score,
                                is_executable=not done.result.is_error, purpose="candidate"))
    verdict = "accepted" if score is not None and score > THRESHOLD else "rejected"
    wf.record(Note(level="info", message="candidate " + verdict, data={{"threshold": THRESHOLD}}))
    wf.record(PhaseCompleted(phase="tmp", result={{"verdict": verdict}}))
    wf.complete(submission_path="", best_score=score, result={{"final_solution_id": sid}})
'''


def write_threshold_strategy(directory: Path, module: str, threshold: float) -> str:
    (directory / f"{module}.py").write_text(THRESHOLD_STRATEGY.format(threshold=threshold), encoding="utf-8")
    return f"{module}:main"
