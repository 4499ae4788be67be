"""Starting and resuming runs: a run created, driven (new or resumed), and found again for grading.

Where files go is ``engine/run/locations.py``, where a run's clock starts ``engine/run/clock.py``,
the backend and executors a run gets ``engine/run/executors.py``; their names are re-exported here,
where the commands have always found them."""

from __future__ import annotations

import itertools
import math
import secrets
import shlex
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from engine.agents.base import AgentBackend
from engine.run import collector
from engine.run.clock import command_clock_started, process_started_monotonic, started_as_command
from engine.run.driver import Driver
from engine.run.errors import EngineError
from engine.run.executors import gpu_info, make_backend, make_executors, preflight, sandbox_mode_for
from engine.run.held_back import draw_for_run, held_back_for
from engine.run.locations import (
    DEFAULT_DB,
    DEFAULT_RUNS_DIR,
    DatabaseUrl,
    db_path,
    open_store,
    runs_dir,
    runs_root,
)
from engine.run.run_folder import refuse_run_dir_in_task
from engine.run.strategies import load_strategy
from events.base import Event, NewEvent
from events.core import RunStarted
from events.domain import PipelineConfig, TaskDescription
from events.sandbox import SandboxMode, SandboxNotice
from handlers.patches import adopted_by_new_runs
from handlers.runtime import Runtime
from handlers.step_policy import time_driven
from handlers.timebudget import FINALIZATION_FLOOR_S, shortest_workable_limit_s
from replay.state import PipelineState, fold
from store.base import EventStore, RunExists, early_event
from store.chain import require_intact_chain
from store.run_ids import check_run_id

if TYPE_CHECKING:  # the task loader (pandas) is imported only by the commands that load a task
    from engine.tasks import LoadedTask


def new_run_id() -> str:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    return f"run-{stamp}-{secrets.token_hex(3)}"


@dataclass(frozen=True)
class PreparedTask:
    description: TaskDescription
    public_dir: Path
    label: str


def create_run(store: Any, *, db: Path | DatabaseUrl, task: PreparedTask | None = None, task_spec: str | None = None,
               strategy: str, backend_name: str, config: PipelineConfig, seed: int,
               run_id: str | None = None, deterministic_order: bool = True,
               params: dict[str, Any] | None = None, selection: Event | None = None,
               clock_started: float | None = None) -> str:
    """Validate everything, then append RunStarted with the decisions it causes (one transaction).
    ``params`` are strategy inputs recorded in RunStarted (e.g. phase2_only's start solution);
    ``selection``: which agent backend runs and why (``AgentSelected``, REQ-OR-046), recorded with it.
    ``clock_started``: the ``time.monotonic()`` at which the run's time limit started (``engine
    start``: the process's start): the start-up before the run exists (preparing the task, the
    backend's check) is recorded as RunStarted's ``elapsed_s`` and counts against the limit."""
    main = load_strategy(strategy)
    # The time mode's decisions follow the clock, so no order of results makes two of its runs
    # write the same log; what the request order would cost it is real: a slot freed by a quick
    # result stays idle until every earlier request ends (zip-state at 120 s: a 2 s draft's result
    # waited 21 s for the draft before it, and Phase 1 drafted nothing meanwhile). Its results are
    # committed as they finish, as its rules are tested (``tests.support.sim``).
    deterministic_order = deterministic_order and not time_driven(config)
    run_id = new_run_id() if run_id is None else check_run_id(run_id)
    run_dir = runs_root(db) / run_id
    made_here = not run_dir.exists()
    if task is None:
        if task_spec is None:
            raise EngineError("a task is required (--task NAME|DIR)")
        refuse_run_dir_in_task(run_dir, task_spec)
        task = prepare_task(task_spec, run_dir / "task")
    refuse_spent_startup(config, _startup_s(clock_started), run_dir if made_here else None)
    run_dir.mkdir(parents=True, exist_ok=True)
    _claim(store, run_id, strategy, task.label)
    # (the task is loaded again only to draw a slice: loading reads every file of a large task)
    held_back = draw_for_run(config, task_of_run(run_dir, task.public_dir) if config.hidden_slice else None,
                             run_dir, seed)
    startup_s = _startup_s(clock_started)  # the slice drawn counts too
    sandbox_notice = _resolve_sandbox(config)
    started = RunStarted(strategy=strategy, backend=backend_name, seed=seed, config=config.model_dump(mode="json"),
                         task=task.description, task_dir=str(task.public_dir.resolve()),
                         run_dir=str(run_dir.resolve()), deterministic_order=deterministic_order,
                         params=dict(params or {}), patches=adopted_by_new_runs(), elapsed_s=startup_s)
    decisions = Runtime(main).feed(started)
    store.append(run_id, [NewEvent(event=started, scope="run"),
                          *[NewEvent(event=d.event, scope=d.scope, causation_seq=1) for d in decisions],
                          NewEvent(event=sandbox_notice, scope="run", causation_seq=1),
                          NewEvent(event=held_back, scope="run", causation_seq=1),
                          *([NewEvent(event=selection, scope="run", causation_seq=1)] if selection is not None else [])],
                 expected_seq=0)
    return run_id


def _startup_s(clock_started: float | None) -> float:
    return 0.0 if clock_started is None else round(time.monotonic() - clock_started, 6)


def _claim(store: Any, run_id: str, strategy: str, label: str) -> None:
    """Register the run id in the store before anything is written into its folder: a live run's
    id is refused here (RunExists), before its files could be touched."""
    try:
        store.create_run(run_id, strategy=strategy, task=label)
    except RunExists:
        if store.last_seq(run_id) != 0:
            raise
        # created by a start that died before its first append: nothing was recorded, take it over


def time_left_problems(config: PipelineConfig, startup_s: float) -> list[str]:
    """A start-up (the task's check and copy, the backend's check) that left the run less than
    finalization's floor (``FINALIZATION_FLOOR_S``): the run's clock started with the command, so the
    plan has only what is left, and a run begun with less could only fail without a submission.
    Between the floor and the shortest workable limit a run still tries (a small task's candidate
    takes a second): the up-front check of ``--time-limit`` already counted a start-up in it."""
    left = config.time_limit_seconds - startup_s
    if left >= FINALIZATION_FLOOR_S or config.time_limit_seconds < FINALIZATION_FLOOR_S:
        return []  # (a limit below the floor from the start is the up-front check's, or a library call's)
    shortest = shortest_workable_limit_s(config)
    return [f"the start-up before the run took {startup_s:.0f} s of --time-limit {config.time_limit_seconds} s; "
            f"the {max(0.0, left):.0f} s left are too short even for finalization (at least "
            f"{FINALIZATION_FLOOR_S:.0f} s): give --time-limit {math.ceil(startup_s) + shortest} or more, or "
            "start on a less busy machine"]


def refuse_spent_startup(config: PipelineConfig, startup_s: float, made_dir: Path | None) -> None:
    """No run is created when its start-up left it too little of its limit for a submission
    (``time_left_problems``): a user error, exit 2, nothing recorded, and the run folder this
    start made (the task's copy) removed, so the same run id can start again."""
    problems = time_left_problems(config, startup_s)
    if problems:
        if made_dir is not None:
            shutil.rmtree(made_dir, ignore_errors=True)
        raise EngineError(problems[0])


def _resolve_sandbox(config: PipelineConfig) -> SandboxNotice:
    """Resolve ``--sandbox`` once, at the start, into a ``SandboxNotice`` (a warning when
    scripts will run unsandboxed). The config keeps what the user asked for; the notice holds
    the mode the run got, which a resume keeps (see ``recorded_sandbox_mode``)."""
    from engine.sandbox import describe_resolution

    mode = sandbox_mode_for(config)
    level, message = describe_resolution(config.sandbox, mode)
    return SandboxNotice(requested=config.sandbox, mode=mode, level=level, message=message)


def recorded_sandbox_mode(store: Any, run_id: str, config: PipelineConfig) -> SandboxMode:
    """The sandbox mode a (resumed) run drives with: the one resolved at its start, required
    again (a run that started under bwrap never continues unsandboxed), else ``--sandbox``."""
    # Read as sealed where the store can: the notice holds no artifact, and resolving the prompts
    # of the first events cost every resume a read of their artifacts.
    notice = early_event(store, run_id, "SandboxNotice")
    if notice is not None:
        return sandbox_mode_for(config.model_copy(update={"sandbox": notice.payload["mode"]}))
    return sandbox_mode_for(config)


def prepare_task(spec: str, dest: Path) -> PreparedTask:
    from engine.tasks import resolve_task

    loaded = resolve_task(spec, dest)
    return PreparedTask(description=loaded.description, public_dir=Path(loaded.public_dir),
                        label=loaded.description.competition_id)


def drive(store: EventStore, run_id: str, *, backend: AgentBackend | None = None,
          on_commit: Callable[[PipelineState], None] | None = None, handle_signals: bool = True,
          checked: Any = None) -> PipelineState:
    """Drive a run (new or resumed) until it ends or the driver is stopped."""
    return anyio.run(lambda: drive_async(store, run_id, backend=backend, on_commit=on_commit,
                                         handle_signals=handle_signals, checked=checked))


async def drive_async(store: EventStore, run_id: str, *, backend: AgentBackend | None = None,
                      on_commit: Callable[[PipelineState], None] | None = None,
                      handle_signals: bool = True, checked: Any = None) -> PipelineState:
    """:func:`drive` for callers already inside an event loop (the library API).

    ``checked`` is the backend's start-up check if the caller already ran it (``engine start``
    does, before the run exists); otherwise it runs here, before the driver takes the run."""
    require_intact_chain(store, run_id, "resumed")  # before anything is read from it or appended to it
    # Only the first events (RunStarted: strategy, backend, config) and the last one (finished?) are
    # needed here; the driver reads and folds the whole log itself (reading it twice cost resumes).
    reader = store.read(run_id)
    head = list(itertools.islice(reader, 1))
    reader.close()
    tail = list(store.read(run_id, from_seq=max(1, store.last_seq(run_id))))
    state = fold(head + [e for e in tail if not head or e.seq != head[0].seq])
    if state.finished:
        from engine.run.errors import RunFinished

        raise RunFinished(f"run {run_id} is already {state.status}; nothing to resume")
    require_run_files(state)
    main = load_strategy(state.strategy)
    if backend is None:
        backend = make_backend(state.backend, PipelineConfig.model_validate(state.config), db=store.path)
    check = getattr(backend, "preflight", None)
    if checked is None and check is not None:
        checked = await check()
    collector.run_loaded()  # the strategy's handlers and the backend are loaded (engine/run/collector.py)
    holder: dict[str, Driver] = {}
    db_file = getattr(store, "path", None)
    executors = make_executors(lambda: holder["d"].state, backend, lambda e, scope: holder["d"].record(e, scope),
                               protected=(str(Path(db_file).resolve()),) if db_file and "://" not in str(db_file) else (),
                               sandbox_mode=recorded_sandbox_mode(store, run_id,
                                                                  PipelineConfig.model_validate(state.config)),
                               clock=lambda: holder["d"].elapsed(),
                               held_back=held_back_for(store, run_id, lambda: task_of_run(Path(state.run_dir),
                                                                                          Path(state.task_dir))))
    driver = Driver(store, run_id, main=main, executors=executors, on_commit=on_commit,
                    handle_signals=handle_signals)
    holder["d"] = driver

    def on_started() -> None:  # the driver holds the run now: what happened before it goes in
        from engine.run.agent_calls import AgentExecutor
        from events.spend import AgentSpendRecorded

        agent = executors.agent
        if isinstance(agent, AgentExecutor):
            agent.record_lost_calls(Path(driver.state.run_dir) / "agents")
        if checked is not None and getattr(checked, "cost_usd", None):
            driver.record(AgentSpendRecorded(reason="preflight", backend=getattr(backend, "name", ""),
                                             cost_usd=checked.cost_usd, detail="start-up check of the model API"),
                          "driver")

    driver.on_started = on_started
    final = await driver.run()
    store.set_status(run_id, final.status)
    return final


class RunFilesMissing(EngineError):
    """The run's directory or its task data is not where the run recorded it: nothing is run (every
    step would fail and the run with them); once restored, the run resumes."""


def require_run_files(state: PipelineState) -> None:
    """Refuse to drive a run whose directory or task data is missing (RunFilesMissing)."""
    hint = f"restore it and resume (`engine resume {shlex.quote(state.run_id)}`)"
    if state.run_dir and not Path(state.run_dir).is_dir():
        raise RunFilesMissing(f"the run's directory {state.run_dir} is missing; {hint}")
    if state.task_dir and not Path(state.task_dir).is_dir():
        raise RunFilesMissing(f"the run's task data directory {state.task_dir} is missing; {hint}")


def locate_run_submission(run_id: str, db: str | Path | None = None) -> tuple[LoadedTask, Path]:
    """The task and the submission file of a run, for ``engine grade RUN_ID``."""
    store = open_store(db_path(db), create=False)
    state = fold(store.read(run_id))
    if not state.run_dir:
        raise EngineError(f"run {run_id} has no RunStarted event")
    task = task_of_run(Path(state.run_dir), Path(state.task_dir))
    if not state.submission_path:
        raise EngineError(f"run {run_id} has no submission ({state.status}); nothing to grade")
    return task, Path(state.submission_path)


def task_of_run(run_dir: Path, public_dir: Path) -> LoadedTask:
    """The task whose public data the run's agents saw, loaded from a root that also holds its
    private answers: the copy a bundled task was prepared into (``<run>/task/<name>``), else the
    task directory the run was started from — the parents of its ``public/`` (``prepared/`` and the
    competition root, MLE-bench's layout), where grading finds them."""
    from engine.tasks import TaskError, load_task

    prepared_copy = run_dir / "task"
    roots = sorted(p for p in prepared_copy.iterdir() if p.is_dir()) if prepared_copy.is_dir() else []
    roots += [public_dir.parent.parent, public_dir.parent] if public_dir.name == "public" else []
    seen = public_dir.resolve()
    fallback = None
    for root in roots:
        try:
            task = load_task(root)
        except TaskError:
            continue
        if task.public_dir.resolve() == seen:
            if task.answers is not None:
                return task
            fallback = fallback or task
    return fallback or load_task(public_dir)


__all__ = ["DEFAULT_DB", "DEFAULT_RUNS_DIR", "DatabaseUrl", "PreparedTask", "RunFilesMissing", "command_clock_started",
           "create_run", "db_path", "drive", "drive_async", "gpu_info", "locate_run_submission", "make_backend",
           "make_executors", "new_run_id", "open_store", "preflight", "prepare_task", "process_started_monotonic",
           "recorded_sandbox_mode", "require_run_files", "runs_dir", "runs_root", "sandbox_mode_for",
           "started_as_command", "task_of_run"]
