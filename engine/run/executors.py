"""What a run gets to act with: its agent backend (``--agent``) and the executors that turn its effect
requests into results (agent calls, evaluations in the harness or on Ray, in the sandbox it resolved)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from engine.agents.base import AgentBackend
from engine.run.errors import EngineError
from engine.run.locations import db_path, open_store
from events.base import EffectResult
from events.core import AgentCallFailed, AgentCallRequested, EvaluationCompleted, EvaluationRequested, TimerFired
from events.domain import EvaluationResult, PipelineConfig
from events.sandbox import SandboxMode
from replay.state import PendingEffect, PipelineState

if TYPE_CHECKING:
    from engine.harness.held_back import HeldBack


@dataclass
class Executors:
    """What turns effect requests into results. ``agent`` and ``evaluate`` are coroutines."""

    agent: Callable[[AgentCallRequested, Path], Coroutine[Any, Any, EffectResult]]
    evaluate: Callable[[EvaluationRequested, str], Coroutine[Any, Any, EffectResult]]


def failure_result(eff: PendingEffect, exc: Exception) -> EffectResult:
    """What an effect whose executor raised becomes: a failed result, never a dead run."""
    if eff.type == "AgentCallRequested":
        return AgentCallFailed(effect_id=eff.effect_id, error=f"agent backend error: {exc}")
    if eff.type == "EvaluationRequested":
        return EvaluationCompleted(effect_id=eff.effect_id, result=EvaluationResult(
            score=None, stdout="", stderr=f"evaluation harness error: {exc}", exit_code=-1,
            duration_seconds=0.0, is_error=True, error_traceback=f"evaluation harness error: {exc}"))
    return TimerFired(effect_id=eff.effect_id)


def make_backend(name: str, config: PipelineConfig, *, db: str | Path | None = None) -> AgentBackend:
    """Resolve ``--agent`` (claude|builtin|replay:RUN|auto|module:Attr) to a backend.

    The backend remembers the name to record in RunStarted (``record_name``): the resolved
    one, so that ``auto`` resumes with the backend it chose, and a one-line
    ``selection_note`` saying why.
    """
    from engine.agents.select import select_backend

    replay_source = None
    if name.startswith("replay:"):
        source_run = name.split(":", 1)[1]
        store = open_store(db_path(db), create=False)
        from engine.agents.recorded import ReplayBackend

        replay_source = ReplayBackend(list(store.read(source_run)), source_label=f"run {source_run}")
        backend: Any = replay_source
        backend.record_name = name
        backend.selection_note = f"backend: replay (answers recorded in run {source_run})"
        return backend
    choice = select_backend(name, config=config)
    backend = choice.backend
    resolved = name if ":" in name else choice.name
    try:
        backend.record_name = resolved
        backend.selection_note = choice.explanation
    except AttributeError:  # a backend with __slots__: fall back to a wrapper-free record
        pass
    return backend


def gpu_info() -> dict[str, Any]:
    try:
        from engine.harness import detect_gpu_info

        return dict(detect_gpu_info())
    except Exception:  # GPU probing must never stop a run
        return {"cuda_available": False}


def sandbox_mode_for(config: PipelineConfig) -> SandboxMode:
    """The sandbox mode evaluations of a run get on this machine (``--sandbox``), or an
    ``EngineError`` naming the package to install when bwrap is required but unusable."""
    from engine.sandbox import SandboxUnavailable, resolve_mode

    try:
        return resolve_mode(config.sandbox)
    except SandboxUnavailable as exc:
        raise EngineError(str(exc)) from None


def make_executors(driver_state: Callable[[], PipelineState], backend: AgentBackend,
                   record: Callable[[Any, str], None] | None = None,
                   protected: tuple[str, ...] = (), sandbox_mode: SandboxMode = "none",
                   clock: Callable[[], float] | None = None, held_back: HeldBack | None = None) -> Executors:
    """``record`` appends a bookkeeping event (spend seen by the agent executor);
    ``sandbox_mode``: bwrap|none (see ``sandbox_mode_for``); ``protected``: host paths no
    evaluation may see (the database), besides the task's private answers; ``clock``: the
    driver's driven time, from which an agent call's deadline becomes its time limit;
    ``held_back``: the slice of training rows the run holds back from its search (events/hidden.py)."""
    from engine.run.agent_calls import AgentExecutor

    gpu = gpu_info()
    agent = AgentExecutor(driver_state, backend, gpu, record, clock=clock)

    async def evaluate(request: EvaluationRequested, code: str) -> EvaluationCompleted:
        from engine.harness.executor import EvalContext, run_evaluation

        run = driver_state().context()
        task_dir = run.task_dir
        from engine.tasks.layout import sample_submission_for

        sample = sample_submission_for(task_dir)  # as task.yaml names it, not only sample_submission.csv
        cfg = run.config
        ctx = EvalContext(run_dir=run.run_dir, task_dir=task_dir,
                          sample_submission=sample, metric=run.task.evaluation_metric,
                          subsample_limit=cfg.subsample_limit, memory_limit_mb=cfg.memory_limit_mb, gpu_info=gpu,
                          sandbox_mode=sandbox_mode, protected=protected, env_pass=cfg.eval_env_pass,
                          held_back=held_back)
        if cfg.evaluation_executor == "ray":
            from engine.run.ray_eval import evaluate_on_ray

            return await evaluate_on_ray(request, code, ctx, cpus=cfg.evaluation_cpus, gpus=cfg.evaluation_gpus)
        return await run_evaluation(request, code, ctx)

    return Executors(agent=agent, evaluate=evaluate)


def preflight(backend: AgentBackend) -> Any:
    """The backend's start-up check (if it has one): raises BackendUnavailable in seconds."""
    check = getattr(backend, "preflight", None)
    return anyio.run(check) if check is not None else None


__all__ = ["Executors", "failure_result", "gpu_info", "make_backend", "make_executors", "preflight",
           "sandbox_mode_for"]
