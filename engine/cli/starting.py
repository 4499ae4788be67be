"""What `engine start` does before the run exists: its inputs checked, its backend checked, and
what it tells the user. Nothing here creates a database, a run or an event."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from engine.cli.errors import fail
from engine.config.presets import build_config
from engine.run import lifecycle as runs_mod
from engine.run.run_folder import refuse_run_dir_in_task
from store.run_ids import check_run_id

err = Console(stderr=True)


def checked_start_inputs(task: str, *, strategy: str, agent: str, preset: str, config: Path | None,
                          set_: list[str], time_limit: int | None, max_budget: float | None, sandbox: str | None,
                          reference_discussions: Path | None, run_id: str | None,
                          db: str | None = None) -> tuple[Any, dict[str, object]]:
    """Everything `engine start` is given, checked before the database, the run or any agent call
    exists (REQ-OR-002: a bad task, config or file is exit 2): the settings and the run's params."""
    from engine.config.references import read_reference_discussions, with_contamination_check
    from engine.config.validate import InputError, validate_start
    from engine.tasks.check import start_refusal

    refusal = start_refusal(task)  # docs/tasks.md: a task that cannot produce a valid submission
    if refusal:
        fail(refusal)
    params: dict[str, object] = {}
    try:
        if reference_discussions is not None:  # REQ-FN-030/034: the contamination check, on request
            params = with_contamination_check(params, read_reference_discussions(reference_discussions))
        cfg = build_config(preset=preset, config_file=config, overrides=set_,
                           extra={"time_limit_seconds": time_limit, "max_budget_usd": max_budget, "sandbox": sandbox,
                                  "contamination_check": True if params else None})
        validate_start(task, cfg, strategy=strategy, agent=agent)
    except InputError as exc:
        fail(str(exc))
    if run_id is not None:  # refused before the backend's check (which may cost) and before any database
        check_run_id(run_id)
        refuse_run_dir_in_task(runs_mod.runs_root(runs_mod.db_path(db)) / run_id, task)
    return cfg, params


def checked_backend(agent: str, cfg: Any, db: str | None) -> tuple[Any, Any]:
    """The agent backend, checked (a bad key or endpoint stops here, before the run exists)."""
    backend = runs_mod.make_backend(agent, cfg, db=runs_mod.db_path(db))
    checked = runs_mod.preflight(backend)
    price_note = getattr(backend, "price_warning", lambda _checked: None)(checked)  # a budget it cannot meter
    if price_note:
        err.print(f"[yellow]warning:[/] {escape(price_note)}", highlight=False, soft_wrap=True)
    return backend, checked


def announce_start(backend: Any, agent: str, strategy: str, run_id: str, cfg: Any) -> None:
    note = getattr(backend, "selection_note", "")
    if note:
        err.print(note)
    agent_sandbox = getattr(backend, "sandbox_description", "")
    if agent_sandbox:
        err.print(f"agent {agent_sandbox}", highlight=False)
    err.print(f"run [bold]{run_id}[/] started ({strategy}, agent {getattr(backend, 'name', agent)})")
    print_sandbox_warning(cfg)


def print_sandbox_warning(cfg: Any) -> None:
    from engine.sandbox import describe_resolution

    level, message = describe_resolution(cfg.sandbox, runs_mod.sandbox_mode_for(cfg))
    if level == "warning":
        err.print(f"[yellow]warning:[/] {escape(message)}", highlight=False)
