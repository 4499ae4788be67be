"""The ``engine`` command line. It reads through store/ and replay/ and decides nothing.

Exit codes: 0 ok, 1 the run failed or a check failed, 2 a usage or input error.
"""

from __future__ import annotations

import json
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from engine.cli.errors import EngineGroup
from engine.cli.errors import exit_code_of as _exit_code
from engine.cli.errors import user_errors as _user_errors
from engine.cli.starting import announce_start, checked_backend, checked_start_inputs
from engine.cli.stores import UsageError, open_db
from engine.run import collector
from engine.run import lifecycle as runs_mod
from engine.run.snapshots import state_of
from replay.state import PipelineState
from store.base import EventStore, StoreError
from store.chain import require_intact_chain

if TYPE_CHECKING:
    from rich.status import Status  # the progress line's, imported by rich when it is shown

app = typer.Typer(cls=EngineGroup, add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="An event-sourced engine for ML-engineering agents (MLE-STAR, evolutionary search).")
out = Console()
WIDE_RUNS_TABLE = 120  # columns: below it `engine runs` leaves out strategy, phase and events
err = Console(stderr=True)

DbOpt = typer.Option(None, "--db", help="Event database: a file or a postgresql:// URL (default $ENGINE_DB or ./engine-runs/engine.db).")


def _store(db: str | Path | None, *, must_exist: bool = True) -> tuple[EventStore, Path | runs_mod.DatabaseUrl]:
    return open_db(db, must_exist=must_exist)


def _state(store: Any, run_id: str) -> PipelineState:
    """The run's fold from its last snapshot (engine/run/snapshots.py): `status` and `runs` on
    a day-long run read what was appended since, not the whole log."""
    return state_of(store, run_id)


# --- start / resume ---------------------------------------------------------------------------


def _progress_callback(enabled: bool) -> tuple[Callable[[PipelineState], None] | None, Status | None]:
    if not enabled:
        return None, None
    status = err.status("starting…")
    status.start()
    started = time.monotonic()

    def on_commit(s: PipelineState) -> None:
        best = "-" if s.best_score is None else f"{s.best_score:.5g}"
        paths = " ".join(f"{k}:{v}" for k, v in s.phase2_path_statuses.items())
        status.update(f"[bold]{s.current_phase or 'starting'}[/] {paths}  events {s.events}  "
                      f"agent calls {s.agent_call_count}  evals {s.evaluation_count}  best {best}  "
                      f"cost ${s.accumulated_cost_usd:.4f}  {time.monotonic() - started:.0f}s")

    return on_commit, status


def _drive_and_report(store: Any, run_id: str, *, json_out: bool, backend: Any = None, checked: Any = None,
                      just_created: bool = False) -> None:
    from engine.run.errors import RunFinished

    show = sys.stderr.isatty() and not json_out
    on_commit, status = _progress_callback(show)
    try:
        state = runs_mod.drive(store, run_id, backend=backend, on_commit=on_commit, checked=checked)
    except RunFinished:
        if not just_created:
            raise
        state = _state(store, run_id)  # it ended as it started (e.g. a time limit too short for Phase 1)
    finally:
        if status is not None:
            status.stop()
    summary = state.summary()
    if json_out:
        out.print_json(json.dumps(summary))
    else:
        colour = {"completed": "green", "failed": "red"}.get(state.status, "yellow")
        out.print(f"run [bold]{run_id}[/] [{colour}]{state.status}[/]  best score {summary['best_score']}  "
                  f"events {state.events}  agent calls {state.agent_call_count}  "
                  f"elapsed {state.elapsed_seconds:.1f}s  cost ${state.accumulated_cost_usd:.4f}")
        if state.submission_path:
            out.print(f"submission: {state.submission_path}")
        if state.error:
            out.print(f"[red]error:[/] {state.error}")
        if state.status == "stopped":
            out.print(f"resume with: engine resume {shlex.quote(run_id)}", markup=False, highlight=False)
    if state.status != "completed":
        raise typer.Exit(1)


@app.command()
def start(
    task: str = typer.Option(..., "--task", help="A bundled task name or a task directory."),
    strategy: str = typer.Option("mle-star", "--strategy", help="mle-star | evolve | module:function"),
    agent: str = typer.Option("auto", "--agent", help="claude | openai | builtin | replay:RUN_ID | auto | module:Attr"),
    preset: str = typer.Option("paper", "--preset", help="paper | quick | time (the time plan decides the step counts; use with --time-limit)"),
    config: Path | None = typer.Option(None, "--config", help="YAML/JSON file of settings."),
    set_: list[str] = typer.Option([], "--set", help="Override a setting: key=value (repeatable)."),
    seed: int = typer.Option(0, "--seed", min=0, max=2**32 - 1,  # what numpy and scikit-learn take as a seed
                             help="The run's seed: a whole number from 0 to 4294967295."),
    time_limit: int | None = typer.Option(None, "--time-limit", help="Seconds for the whole run."),
    max_budget: float | None = typer.Option(None, "--max-budget", help="US dollars for agent calls."),
    run_id: str | None = typer.Option(None, "--run-id", help="Name the run (default: generated)."),
    completion_order: bool = typer.Option(False, "--completion-order",
                                          help="Record results as they finish (faster, not reproducible; "
                                          "the time preset always does)."),
    sandbox: str | None = typer.Option(None, "--sandbox",
                                          help="auto | bwrap | none: isolate evaluation scripts (default auto)."),
    reference_discussions: Path | None = typer.Option(
        None, "--reference-discussions", help="Check the final solution for contamination against these "
        "discussions (JSON list, or text separated by '---' lines). Off by default."),
    json_out: bool = typer.Option(False, "--json"),
    db: str | None = DbOpt,
) -> None:
    """Start a run and drive it to the end."""
    # REQ-OR-024: the time limit is wall-clock time from `engine start`: the run's clock starts
    # with the command's process (the interpreter's start-up, the imports, preparing the task and
    # the backend's check count), not at its first event; called inside a longer-lived process, with the call.
    clock_started = runs_mod.command_clock_started()
    cfg, params = checked_start_inputs(
        task, strategy=strategy, agent=agent, preset=preset, config=config, set_=set_, time_limit=time_limit,
        max_budget=max_budget, sandbox=sandbox, reference_discussions=reference_discussions, run_id=run_id, db=db)
    backend, checked = checked_backend(agent, cfg, db)
    store, path = _store(db, must_exist=False)
    from engine.agents.select import selection_event

    new_id = runs_mod.create_run(store, db=path, task_spec=task, strategy=strategy,
                                 backend_name=getattr(backend, "record_name", agent), config=cfg, seed=seed,
                                 run_id=run_id, deterministic_order=not completion_order, params=params,
                                 selection=selection_event(backend, agent),  # in the log and --json
                                 clock_started=clock_started)
    if not json_out:
        announce_start(backend, agent, strategy, new_id, cfg)
    _drive_and_report(store, new_id, json_out=json_out, backend=backend, checked=checked, just_created=True)


@app.command()
def resume(run_id: str, json_out: bool = typer.Option(False, "--json"), db: str | None = DbOpt) -> None:
    """Continue a stopped, crashed or timed-out run exactly where it stopped."""
    store, _ = _store(db)
    _drive_and_report(store, run_id, json_out=json_out)


# --- reading runs -----------------------------------------------------------------------------


@app.command("runs")
def list_runs(json_out: bool = typer.Option(False, "--json"), db: str | None = DbOpt) -> None:
    """List the runs in the database."""
    store, _ = _store(db)
    rows = [_state(store, r.run_id).summary() | {"created_at": r.created_at} for r in store.list_runs()
            if r.strategy != "campaign"]  # a campaign's own stream is not a run: `engine campaign status`
    if json_out:
        out.print_json(json.dumps(rows))
        return
    cells = {"run": lambda r: r["run_id"], "status": lambda r: r["status"], "strategy": lambda r: r["strategy"],
             "task": lambda r: r["task"], "phase": lambda r: r["current_phase"],
             "best": lambda r: "-" if r["best_score"] is None else f"{r['best_score']:.5g}",
             "events": lambda r: str(r["events"]), "created": lambda r: r["created_at"][:16].replace("T", " ")}
    # A narrow terminal gets the columns that tell runs apart, each word whole and without a frame,
    # rather than every column cut to three letters; `--json` has them all.
    wide = out.width >= WIDE_RUNS_TABLE
    shown = list(cells) if wide else ["run", "status", "task", "best", "created"]
    table = Table(*shown) if wide else Table(*shown, box=None, pad_edge=False)
    values = [[cells[name](r) for name in shown] for r in rows]
    for i, column in enumerate(table.columns):
        column.overflow = "fold"  # nothing is cut short: a long value wraps
        column.min_width = max(len(word) for text in [column.header, *(v[i] for v in values)] for word in str(text).split())
    table.columns[0].no_wrap = True  # an id is copied into the next command: one line
    for row in values:
        table.add_row(*row)
    out.print(table)


@app.command()
def status(run_id: str, json_out: bool = typer.Option(False, "--json"), db: str | None = DbOpt) -> None:
    """Where a run stands: phase, best score, time, cost, calls."""
    store, _ = _store(db)
    summary = _state(store, run_id).summary()
    if json_out:
        out.print_json(json.dumps(summary))
        return
    table = Table(show_header=False)
    table.add_column(no_wrap=True)
    table.add_column(overflow="fold")  # the submission's path and the error are never cut short
    for key, value in summary.items():
        table.add_row(key, json.dumps(value) if isinstance(value, (dict, list)) else str(value))
    out.print(table)


@app.command("log")
def show_log(run_id: str, follow: bool = typer.Option(False, "--follow", "-f"),
             type_: str | None = typer.Option(None, "--type", help="Only events of this type."),
             json_out: bool = typer.Option(False, "--json"), db: str | None = DbOpt) -> None:
    """Print a run's events (optionally following new ones)."""
    store, _ = _store(db)
    store.get_run(run_id)
    next_seq = 1
    while True:
        for env in store.read(run_id, from_seq=next_seq):
            next_seq = env.seq + 1
            if type_ and env.type != type_:
                continue
            if json_out:
                sys.stdout.write(json.dumps(env.model_dump(mode="json")) + "\n")
            else:
                p = env.payload
                key = p.get("effect_id") or p.get("solution_id") or p.get("phase") or p.get("message") or ""
                extra = ""
                if env.type == "EvaluationCompleted":
                    extra = f" score={p['result'].get('score')} error={p['result'].get('is_error')}"
                out.print(f"{env.seq:>6} {env.recorded_at[11:23]} [cyan]{env.type:<20}[/] {env.scope:<18} {key}{extra}",
                          highlight=False)
        if not follow or _state(store, run_id).finished:
            return
        sys.stdout.flush()
        time.sleep(0.5)


@app.command()
def replay(run_id: str, against: Path | None = typer.Option(None, "--against", help="A stored export (JSONL)."),
           db: str | None = DbOpt) -> None:
    """Re-derive every decision from the recorded inputs; name the first divergence."""
    from engine.run.replayer import replay_log

    if against is not None:
        from engine.run.replayer import read_export

        envelopes = read_export(against)
        label = str(against)
    else:
        store, _ = _store(db)
        require_intact_chain(store, run_id, "replayed")
        envelopes = list(store.read(run_id))
        label = f"run {run_id}"
    divergence, count = replay_log(envelopes)
    if divergence is None:
        out.print(f"OK: {label}: {count} events replayed, every decision matches")
        return
    err.print(f"[red]DIVERGED[/]: {escape(label)}\n{escape(divergence.describe())}", highlight=False)
    raise typer.Exit(1)


@app.command()
def export(run_id: str, output: Path = typer.Option(..., "-o", "--output"), db: str | None = DbOpt) -> None:
    """Write a run's log as JSON Lines."""
    store, _ = _store(db)
    store.get_run(run_id)
    try:
        with open(output, "w", encoding="utf-8") as fh:
            n = store.export_jsonl(run_id, fh)
    except StoreError:
        output.unlink(missing_ok=True)  # a run cut short by a damaged file is not an export
        raise
    out.print(f"exported {n} events of {run_id} to {output}")


@app.command("import")
def import_(source: Path, allow_partial: bool = typer.Option(
                False, "--allow-partial", help="Import a file that may lack its last events (no valid end line) "
                "as a partial run."),
            db: str | None = DbOpt) -> None:
    """Load a run exported with `engine export` (the hash chain and the end line are checked)."""
    from store.jsonl import read_jsonl

    if not source.is_file():
        raise UsageError(f"{source}: no such file")
    with open(source, encoding="utf-8") as fh:
        contents = read_jsonl(fh, allow_partial=allow_partial)  # refused before any database is made
    store, _ = _store(db, must_exist=False)
    run_id = store.import_export(contents)
    count = len(contents.envelopes)
    if contents.partial:
        err.print(f"warning: {escape(contents.partial)}", highlight=False, soft_wrap=True)
        out.print(f"imported run {run_id} as PARTIAL ({count} events; status partial)", markup=False)
    elif contents.legacy:
        out.print(f"imported run {run_id} ({count} events; an export from before end lines, complete: its last "
                  "event ends the run)", markup=False)
    else:
        out.print(f"imported run {run_id} ({count} events)", markup=False)


def _mount_optional() -> None:
    """Sub-commands that live in their own modules."""
    from engine.cli.audit import register
    from engine.cli.campaign import campaign_app
    from engine.cli.tasks import grade_cmd, tasks_app
    from engine.cli.ui import register as register_ui
    from engine.cli.verify import verify_cmd

    app.add_typer(tasks_app, name="tasks", help="Tasks: list and prepare the bundled ones; init and check your own.")
    app.add_typer(campaign_app, name="campaign", help="Campaigns: tasks × seeds run as one unit on Ray.")
    app.command("grade")(grade_cmd)
    app.command("verify")(verify_cmd)
    register(app)
    register_ui(app)


_mount_optional()


def main() -> None:
    """The ``engine`` command. A Ctrl-C that no run is there to catch (while a command that drives
    no run works, or after a run ended on its own) ends it with 130 and one line, never a
    traceback; once a run has recorded its stop, further ones are ignored while the process
    ends (engine/run/stop_signals.py)."""
    try:
        _run_command()
    except KeyboardInterrupt:
        import signal

        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a third Ctrl-C while this line prints
        err.print("[bold red]interrupted[/]")
        sys.exit(130)


def _run_command() -> None:
    import os

    from engine.config.logs import configure

    # Warnings and errors by default; ENGINE_LOG_LEVEL=INFO shows every effect as it runs.
    configure(os.environ.get("ENGINE_LOG_LEVEL", "WARNING"))
    try:
        code = app(standalone_mode=False)  # click *returns* a typer.Exit's code in this mode
        if isinstance(code, int) and code:
            sys.exit(code)
    except SystemExit:
        raise  # the command's own exit: nothing below applies
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except _user_errors() as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(_exit_code(exc))
    except (typer.BadParameter, typer.Abort) as exc:  # pragma: no cover - click formats these
        err.print(f"[bold red]error:[/] {exc}")
        sys.exit(2)
    except _usage_errors() as exc:  # unknown command or option, missing argument
        exc.show()
        sys.exit(2)
    except Exception as exc:  # nothing above foresaw it: still one line, never a traceback
        from engine.cli.errors import internal_error

        try:
            internal_error(exc)
        except typer.Exit as done:
            sys.exit(done.exit_code)
    finally:
        collector.command_ending()  # the process ends next (engine/run/collector.py)
        if runs_mod.started_as_command():
            import signal

            # Only the exit is left: a Ctrl-C now would raise in the interpreter's shutdown and
            # print a traceback there.
            signal.signal(signal.SIGINT, signal.SIG_IGN)


def _usage_errors() -> tuple[type[Any], ...]:  # two unrelated classes, both with .show()
    """Click's usage errors. Typer >= 0.24 vendors click as ``typer._click``, whose exception
    classes are not click's own, so both are caught (an unknown command once gave a traceback)."""
    import click

    classes: list[type[Any]] = [click.exceptions.ClickException]
    try:
        from typer._click.exceptions import ClickException as VendoredClickException
    except ImportError:  # an older typer on the real click
        pass
    else:
        classes.append(VendoredClickException)
    return tuple(classes)


if __name__ == "__main__":
    main()
