"""``engine lineage``, ``engine report`` and ``engine rerun``: the audit verbs, mounted by
``engine.cli.main`` through ``register(app)``. They read through store/ and replay/ and decide nothing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console

if TYPE_CHECKING:  # loaded on use: the CLI starts faster without them
    from engine.audit.runlog import RunLog
    from engine.run.lifecycle import DatabaseUrl
    from store.base import EventStore

out = Console()
err = Console(stderr=True)


def _db_option() -> Any:
    return typer.Option(None, "--db", help="Event database (default $ENGINE_DB or ./engine-runs/engine.db).")


def _open(db: str | Path | None) -> tuple[EventStore, Path | DatabaseUrl]:
    from engine.run import lifecycle as runs_mod

    path = runs_mod.db_path(db)
    if not path.exists():
        _fail(f"no engine database at {path}; start a run first or pass --db")
    return runs_mod.open_store(path, create=False), path


def _fail(message: str, code: int = 2) -> None:
    err.print(f"[bold red]error:[/] {message}", highlight=False)
    raise typer.Exit(code)


def _load(db: str | Path | None, run_id: str) -> tuple[RunLog, EventStore, Path | DatabaseUrl]:
    from engine.audit.runlog import AuditError, load_run

    store, path = _open(db)
    try:
        return load_run(store, run_id), store, path
    except AuditError as exc:
        _fail(str(exc))
        raise  # unreachable


def lineage_cmd(run_id: str = typer.Argument(..., help="The run whose submission to trace."),
                json_out: bool = typer.Option(False, "--json", help="A nested JSON structure."),
                db: str | None = _db_option()) -> None:
    """The final submission's ancestry, back to the retrieved models."""
    from engine.audit.lineage import build_lineage, render_tree
    from engine.audit.runlog import AuditError

    log, _, _ = _load(db, run_id)
    try:
        lineage = build_lineage(log)
    except AuditError as exc:
        _fail(str(exc))
        return
    if json_out:
        sys.stdout.write(json.dumps(lineage.to_json(), indent=1, default=str) + "\n")
        return
    out.print(render_tree(lineage), highlight=False)
    from engine.audit.isolation import audit_sandbox

    for line in audit_sandbox(log.envelopes).lines():
        out.print(line, highlight=False, markup=False, soft_wrap=True)


def report_cmd(run_id: str = typer.Argument(..., help="The run to report on."),
               output: Path = typer.Option(Path("report.html"), "-o", "--output", help="Where to write the HTML."),
               db: str | None = _db_option()) -> None:
    """One self-contained HTML page: summary, score over time, cost per phase, lineage, notes."""
    from engine.audit.report import render_report

    log, _, _ = _load(db, run_id)
    html = render_report(log)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(html, encoding="utf-8")
    out.print(f"report of run {run_id} written to {output} ({len(html) // 1024} KiB)", highlight=False)


def rerun_cmd(run_id: str = typer.Argument(..., help="The recorded run to run again."),
              new_run_id: str | None = typer.Option(None, "--run-id", help="Name the new run."),
              strategy: str | None = typer.Option(None, "--strategy",
                                                     help="Drive the rerun with another strategy (module:function)."),
              strict: bool = typer.Option(False, "--strict", help="Also compare time-derived fields."),
              json_out: bool = typer.Option(False, "--json"),
              db: str | None = _db_option()) -> None:
    """Run a recorded run again with the answers it recorded (replay backend), re-executing every
    evaluation, and name the first decision that differs. Exit 0 identical, 1 different."""
    from engine.audit.rerun import rerun
    from store.chain import require_intact_chain

    _, store, path = _load(db, run_id)
    require_intact_chain(store, run_id, "rerun")
    outcome = rerun(path, run_id, new_run_id=new_run_id, strategy=strategy, strict=strict,
                    progress=None if json_out else (lambda msg: err.print(msg, highlight=False)))
    if json_out:
        sys.stdout.write(json.dumps(outcome.to_json(), indent=1, default=str) + "\n")
    else:
        out.print(outcome.describe(), highlight=False, markup=False)
    if outcome.difference is not None or outcome.status != "completed":
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("lineage")(lineage_cmd)
    app.command("report")(report_cmd)
    app.command("rerun")(rerun_cmd)
