"""``engine verify``: every stored byte as it was sealed. Mounted by ``engine.cli.main``.

On a damaged database file it says, run by run, which runs still read whole and where the others
stop (the first seq that cannot be read), so that what can be kept is exported before the file is
replaced (README, Troubleshooting).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape

from engine.cli.stores import open_db
from store.base import ChainProblem, EventStore, StorageDamaged, StoreError
from store.chain import describe_problem

out = Console()
err = Console(stderr=True)


def _open(db: str | Path | None) -> EventStore:
    return open_db(db)[0]


def verify_cmd(run_id: str | None = typer.Argument(None, help="The run to check (default: every run)."),
               db: str | None = typer.Option(None, "--db", help="Event database (default $ENGINE_DB or "
                                             "./engine-runs/engine.db).")) -> None:
    """Check the hash chain: every stored byte as it was sealed (one run, or every run)."""
    store = _open(db)
    try:
        runs = [store.get_run(run_id)] if run_id else store.list_runs()
        checked = [(run, store.verify_chain(run.run_id)) for run in runs]
        damaged = any(problem is not None and problem.damaged for _, problem in checked)
    except StorageDamaged:  # a run's own record is unreadable: the report goes through every run
        damaged = True
    if damaged:
        _report_damage(store)
        raise typer.Exit(1)
    if not runs:
        out.print(f"OK: {escape(str(store.path))} holds no runs")
    failed = False
    for run, problem in checked:
        if problem is None:
            out.print(f"OK: run {run.run_id}: {run.last_seq} events, hash chain intact", highlight=False)
            if run_id:
                _print_sandbox_audit(store, run.run_id)
        else:
            failed = True
            err.print(escape(describe_problem(run.run_id, problem)), highlight=False, soft_wrap=True)
    if failed:
        raise typer.Exit(1)


def _report_damage(store: EventStore) -> None:
    """Every run of a damaged file: read whole, or from which seq it cannot be read."""
    err.print(f"[red]DAMAGED[/]: {escape(str(store.path))}: the database file is damaged; every run:",
              highlight=False)
    try:
        runs = store.list_runs()
    except StoreError as exc:
        err.print(f"  the list of runs itself is unreadable ({escape(str(exc))})", highlight=False)
        runs = []
    intact = []
    for run in runs:
        try:
            problem = store.verify_chain(run.run_id)
        except StorageDamaged:
            problem = ChainProblem(1, "the run's own record is unreadable", damaged=True)
        if problem is None:
            intact.append(run.run_id)
            err.print(f"  intact   {run.run_id}: {run.last_seq} events read whole, hash chain intact",
                      highlight=False)
        elif problem.damaged:
            err.print(f"  damaged  {run.run_id}: unreadable from seq {problem.seq} "
                      f"(events 1-{problem.seq - 1} of {run.last_seq} read whole)", highlight=False)
        else:
            err.print(f"  tampered {run.run_id}: first bad event is seq {problem.seq}: {escape(problem.reason)}",
                      highlight=False)
    keep = ", ".join(intact) if intact else "none"
    err.print(f"runs that read whole: {keep}. Save each with `engine export RUN -o RUN.jsonl` and load it into a "
              "new database with `engine import RUN.jsonl --db NEW.db`, or restore the file from a copy.",
              highlight=False, soft_wrap=True)


def _print_sandbox_audit(store: Any, run_id: str) -> None:
    from engine.audit.isolation import audit_sandbox

    audit = audit_sandbox(store.read(run_id))
    style = "green" if audit.answers_unreachable else "yellow"
    for line in audit.lines():
        out.print(f"[{style}]{escape(line)}[/]", highlight=False, soft_wrap=True)
