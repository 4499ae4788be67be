"""The library entry points of spec 09 (REQ-OR-001/002/044..046/051/053), driving the engine.

    result = await run_pipeline("wine", PipelineConfig(num_parallel_solutions=1))
    result = run_pipeline_sync(task_description_with_data_dir)
    phase1 = await run_phase1("wine")
    paths  = await run_phase2_outer_loop("wine", None, initial_solution, initial_score)

Each call is a fresh, recorded run (REQ-OR-051): ``create_run`` appends RunStarted, then the
driver runs it to the end in the caller's event loop (``drive_async``; no nested
``anyio.run``). The run can be inspected, replayed or resumed with the ``engine`` CLI like any
other (``db`` as for ``--db``: default ``$ENGINE_DB`` or ``./engine-runs/engine.db``).

* ``task``: a bundled task name, a task directory, or a ``TaskDescription`` whose ``data_dir``
  is the public data directory. It is validated before anything is written (REQ-OR-002):
  problems raise ``InputError``, a ``ValueError``.
* ``config``: ``None`` means ``PipelineConfig()`` (REQ-OR-044); ``MLE_STAR_*`` variables fill
  the fields the caller did not set (REQ-OR-046, ``engine.config.env_settings``).
* ``agent``: ``claude`` | ``openai`` | ``builtin`` | ``auto`` (the default: chosen by the
  credentials found, REQ-OR-046) | ``replay:<run>`` | ``package.module:Attr``. The choice and why
  is logged (``agent_selected`` on the ``engine.api`` logger) and recorded in the run's log
  (``AgentSelected``). A backend that cannot run here (e.g. ``claude`` without credentials)
  raises ``EnvironmentError``.
* A run that ends in RunFailed raises ``PipelineError`` whose ``diagnostics`` are the
  RunFailed diagnostics plus ``run_id`` and ``run_status`` (REQ-OR-042); when Phase 1 ran out
  of time without producing anything usable, ``PipelineTimeoutError`` (REQ-OR-030.4), with
  the same ``diagnostics`` attribute.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import structlog

from engine.config.env_settings import apply_env
from engine.config.references import checked_discussions, with_contamination_check
from engine.config.validate import config_problems, raise_if, task_problems, task_spec_problems
from engine.run import lifecycle as runs_mod
from events.domain import (
    FinalResult,
    Phase1Result,
    Phase2Result,
    PipelineConfig,
    PipelineError,
    PipelineTimeoutError,
    SolutionScript,
    TaskDescription,
)

TaskInput = str | Path | TaskDescription
log = structlog.get_logger("engine.api")


def _prepared(task: TaskInput) -> tuple[runs_mod.PreparedTask | None, str | None]:
    """Validate ``task`` (REQ-OR-002) and say how create_run should get it."""
    if isinstance(task, TaskDescription):
        raise_if(task_problems(task))
        return runs_mod.PreparedTask(description=task, public_dir=Path(task.data_dir).expanduser(),
                                     label=task.competition_id), None
    description, public_dir = getattr(task, "description", None), getattr(task, "public_dir", None)
    if isinstance(description, TaskDescription) and public_dir is not None:  # an engine.tasks LoadedTask
        return runs_mod.PreparedTask(description=description, public_dir=Path(public_dir),
                                     label=description.competition_id), None
    spec = str(task)
    raise_if(task_spec_problems(spec))
    return None, spec


def _backend(agent: str, config: PipelineConfig, db: Any) -> Any:
    from engine.agents.errors import BackendUnavailable

    try:
        return runs_mod.make_backend(agent, config, db=db)
    except BackendUnavailable as exc:
        raise OSError(f"agent backend {agent!r} cannot run here: {exc}") from exc


async def run_strategy(strategy: str, task: TaskInput, config: PipelineConfig | None = None, *,
                       agent: str = "auto", db: str | Path | None = None, seed: int = 0,
                       params: dict[str, Any] | None = None) -> dict[str, Any]:
    """Start a run of ``strategy`` and drive it to the end; return RunCompleted's ``result``."""
    cfg = apply_env(config if config is not None else PipelineConfig())
    raise_if(config_problems(cfg))
    prepared, spec = _prepared(task)
    path = runs_mod.db_path(db)
    path.parent.mkdir(parents=True, exist_ok=True)
    backend = _backend(agent, cfg, path)
    from engine.agents.select import selection_event

    selection = selection_event(backend, agent)  # REQ-OR-046: which agent runs and why, never silent
    log.info("agent_selected", requested=selection.requested, chosen=selection.chosen, reason=selection.reason)
    checked = None
    if getattr(backend, "preflight", None) is not None:  # a bad key or endpoint fails before the run exists
        from engine.agents.errors import BackendUnavailable

        try:
            checked = await backend.preflight()
        except BackendUnavailable as exc:
            raise OSError(f"agent backend {agent!r} cannot run here: {exc}") from exc
    store = runs_mod.open_store(path, create=True)
    try:
        run_id = runs_mod.create_run(store, db=path, task=prepared, task_spec=spec, strategy=strategy,
                                     backend_name=getattr(backend, "record_name", agent), config=cfg, seed=seed,
                                     params=params, selection=selection)
        state = await runs_mod.drive_async(store, run_id, backend=backend, handle_signals=False, checked=checked)
        if state.status == "completed":
            return dict(state.result) | {"run_id": run_id}
        diagnostics: dict[str, Any] = {}
        for env in store.read(run_id):
            if env.type == "RunFailed":
                diagnostics = dict(env.payload.get("diagnostics") or {})
        diagnostics |= {"run_id": run_id, "run_status": state.status}
        message = state.error or f"run {run_id} ended {state.status}"
        if diagnostics.get("status") == "timed_out":  # REQ-OR-030.4: Phase 1 never finished in time
            raise PipelineTimeoutError(message, diagnostics)
        raise PipelineError(message, diagnostics)
    finally:
        store.close()


async def run_pipeline(task: TaskInput, config: PipelineConfig | None = None, *, agent: str = "auto",
                       db: str | Path | None = None, seed: int = 0,
                       reference_discussions: Sequence[str] | None = None) -> FinalResult:
    """REQ-OR-001: the whole MLE-STAR pipeline; a fully populated ``FinalResult``.
    ``reference_discussions`` turns on finalization's contamination check (REQ-FN-030/034,
    ``engine.config.references``); an empty list is an ``InputError``."""
    params = None
    if reference_discussions is not None:
        params = with_contamination_check(None, checked_discussions(reference_discussions))
        config = (config if config is not None else PipelineConfig()).model_copy(update={"contamination_check": True})
    result = await run_strategy("mle-star", task, config, agent=agent, db=db, seed=seed, params=params)
    return FinalResult.model_validate(result)


def run_pipeline_sync(task: TaskInput, config: PipelineConfig | None = None, *, agent: str = "auto",
                      db: str | Path | None = None, seed: int = 0,
                      reference_discussions: Sequence[str] | None = None) -> FinalResult:
    """REQ-OR-053: ``run_pipeline`` for callers without an event loop."""
    return anyio.run(lambda: run_pipeline(task, config, agent=agent, db=db, seed=seed,
                                          reference_discussions=reference_discussions))


async def run_phase1(task: TaskInput, config: PipelineConfig | None = None, *, agent: str = "auto",
                     db: str | Path | None = None, seed: int = 0) -> Phase1Result:
    """REQ-OR-012 as a library call: Phase 1 alone (strategy ``handlers.mlestar.phase1:phase1_only``)."""
    result = await run_strategy("handlers.mlestar.phase1:phase1_only", task, config, agent=agent, db=db, seed=seed)
    return Phase1Result.model_validate(result["phase1"])


async def run_phase2_outer_loop(task: TaskInput, config: PipelineConfig | None,
                                initial_solution: SolutionScript | str, initial_score: float, *,
                                agent: str = "auto", db: str | Path | None = None,
                                seed: int = 0) -> list[Phase2Result]:
    """REQ-OR-013 as a library call: the L Phase 2 paths from ``initial_solution`` (strategy
    ``handlers.mlestar.phase2:phase2_only``); one ``Phase2Result`` per path."""
    content = initial_solution.content if isinstance(initial_solution, SolutionScript) else str(initial_solution)
    result = await run_strategy("handlers.mlestar.phase2:phase2_only", task, config, agent=agent, db=db, seed=seed,
                                params={"initial_solution": content, "initial_score": float(initial_score)})
    return [Phase2Result.model_validate(r) for r in result["phase2_results"]]


__all__ = ["run_pipeline", "run_pipeline_sync", "run_phase1", "run_phase2_outer_loop", "run_strategy"]
