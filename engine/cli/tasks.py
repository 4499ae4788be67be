"""CLI pieces for tasks and grading; engine/cli/main.py mounts them.

* ``engine tasks list [--json]`` and ``engine tasks prepare NAME DIR`` (``tasks_app``);
* ``engine tasks init DIR`` (write a task.yaml inferred from the folder) and ``engine tasks check DIR``
  (what the engine understood, every problem at once; exit 2 when the task cannot produce a
  valid submission) — docs/tasks.md describes the task folder;
* ``engine grade --task T --submission F [--json] [-o report.json]`` or ``engine grade RUN_ID``
  (``grade_cmd``).

Exit codes of ``grade``: 0 valid submission, 1 invalid submission, 2 usage or input error.
Errors are one clear line on stderr, never a traceback.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from engine.tasks import LoadedTask, TaskError  # light: the heavy parts load on first use

if TYPE_CHECKING:
    from engine.grading.grade_report import GradeReport
    from engine.tasks.check_result import TaskCheck

tasks_app = typer.Typer(no_args_is_help=True,
                        help="Tasks: list and prepare the bundled ones; init and check your own (docs/tasks.md).")

DEFAULT_TASKS_DIR = Path("engine-runs") / "tasks"  # next to the default event database


def _fail(message: str, code: int = 2) -> NoReturn:
    Console(stderr=True).print(f"[bold red]error:[/] {message}", highlight=False)
    raise typer.Exit(code)


def tasks_dir(explicit: Path | None = None) -> Path:
    """--tasks-dir, else $ENGINE_TASKS_DIR, else ./engine-runs/tasks."""
    if explicit:
        return explicit
    env = os.environ.get("ENGINE_TASKS_DIR")
    return Path(env) if env else DEFAULT_TASKS_DIR


@tasks_app.command("list")
def list_cmd(
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """List the bundled tasks."""
    from engine.tasks import list_bundled

    infos = list_bundled()
    if json_out:
        typer.echo(json.dumps([asdict(i) for i in infos], indent=2))
        return
    table = Table(title="Bundled tasks")
    for column in ("name", "type", "metric", "rows", "description"):
        table.add_column(column, justify="right" if column == "rows" else "left")
    for i in infos:
        table.add_row(i.name, i.task_type, i.metric, str(i.rows), i.description)
    Console().print(table)


@tasks_app.command("prepare")
def prepare_cmd(
    name: Annotated[str, typer.Argument(help="Bundled task name (see `engine tasks list`).")],
    dest: Annotated[Path, typer.Argument(help="Directory to prepare the task into.")],
) -> None:
    """Prepare a bundled task in MLE-bench's layout (prepared/public, prepared/private)."""
    try:
        from engine.tasks import prepare_bundled

        path = prepare_bundled(name, dest)
    except (TaskError, OSError) as exc:
        _fail(str(exc))
    typer.echo(f"prepared {name} in {path}")
    typer.echo(f"  public (agents' ./input): {path / 'prepared' / 'public'}")
    typer.echo(f"  private (answers):        {path / 'prepared' / 'private'}")


@tasks_app.command("check")
def check_cmd(
    directory: Annotated[Path, typer.Argument(help="The task folder (docs/tasks.md).")],
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """What the engine understands of a task folder, and every problem with it (exit 2 if it cannot run)."""
    from engine.tasks.check import check_task

    result = check_task(directory)
    if json_out:
        typer.echo(json.dumps(check_as_dict(result), indent=2))
    else:
        print_check(result)
    if result.refused:
        raise typer.Exit(2)


@tasks_app.command("init")
def init_cmd(
    directory: Annotated[Path, typer.Argument(help="The task folder: a Kaggle download (train.csv, "
                                                    "test.csv, sample_submission.csv, description.md).")],
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing task.yaml.")] = False,
) -> None:
    """Write DIR/task.yaml inferred from the folder, each inferred line commented for you to confirm."""
    from engine.tasks.init import write_task_yaml

    try:
        path = write_task_yaml(directory, force=force)
    except (TaskError, OSError) as exc:
        _fail(str(exc))
    typer.echo(f"wrote {path}; confirm each line, then run: engine tasks check {directory}")


def check_as_dict(result: TaskCheck) -> dict[str, object]:
    return {
        "task": str(result.root), "competition_id": result.competition_id, "refused": result.refused,
        "id_column": result.id_column, "metric": result.metric, "direction": result.direction,
        "submission_form": result.metric_form, "submission": result.submission, "answers": result.answers,
        "targets": [asdict(t) for t in result.targets], "columns": [asdict(c) for c in result.columns],
        "problems": [asdict(p) for p in result.problems],
    }


def print_check(result: TaskCheck, console: Console | None = None) -> None:
    console = console or Console()
    understood = Table(title=f"Task {result.competition_id or result.root}", show_header=False)
    understood.add_column("what", no_wrap=True)
    understood.add_column("value", overflow="fold")
    understood.add_row("id column", result.id_column or "?")
    for t in result.targets:
        classes = f" ({', '.join(t.classes[:6])}{', …' if len(t.classes) > 6 else ''})" if t.classes else ""
        understood.add_row(f"target {t.name}", t.kind + classes)
    better = {"maximize": "higher is better", "minimize": "lower is better"}.get(result.direction or "", "")
    understood.add_row("metric", f"{result.metric} ({better})" if result.metric else "?")
    if result.metric_form:
        understood.add_row("submission needs", result.metric_form)
    understood.add_row("submission", result.submission or "?")
    understood.add_row("answers", result.answers)
    console.print(understood)
    if result.columns:
        columns = Table("column", "modality", "role", title="Columns")
        for c in result.columns:
            columns.add_row(c.name, c.modality, c.role)
        console.print(columns)
    print_problems(result, console)


def print_problems(result: TaskCheck, console: Console) -> None:
    if not result.problems:
        console.print("[green]no problems:[/] this task can run")
        return
    for p in result.problems:
        label = "[bold red]problem[/]" if p.blocking else "[yellow]warning[/]"
        console.print(f"{label} {escape(p.line())}", highlight=False, soft_wrap=True)
    blocking = sum(p.blocking for p in result.problems)
    if blocking:
        console.print(f"[bold red]{blocking} problem(s):[/] this task cannot produce a valid submission yet")


def _locate_run(run_id: str, db: str | Path | None) -> tuple[LoadedTask, Path]:
    from engine.run.lifecycle import locate_run_submission

    try:
        return locate_run_submission(run_id, db)
    except (TaskError, LookupError, ValueError, OSError) as exc:
        _fail(f"cannot find the submission of run {run_id!r}: {exc}")


def _print_report(report: GradeReport) -> None:
    table = Table(title=f"Grade — {report.competition_id}", show_header=False)
    table.add_column("field", no_wrap=True)
    table.add_column("value", overflow="fold")  # a submission's path is never cut short: it is copied
    better = "lower" if report.is_lower_better else "higher"
    table.add_row("metric", f"{report.metric} ({better} is better)")
    table.add_row("score", "—" if report.score is None else f"{report.score:.6g}")
    table.add_row("valid submission", "yes" if report.valid_submission else "[red]no[/]")
    if report.grader != "engine":
        table.add_row("graded by", report.grader)
    if report.reason:
        table.add_row("reason", report.reason)
    for medal in ("gold", "silver", "bronze", "median"):
        threshold = getattr(report, f"{medal}_threshold")
        earned = getattr(report, "above_median" if medal == "median" else f"{medal}_medal")
        if threshold is not None:
            table.add_row(f"{medal} threshold", f"{threshold:.6g}" + ("  ✓" if earned else ""))
    table.add_row("submission", report.submission_path)
    Console().print(table)


def grade_cmd(
    run_id: Annotated[str | None, typer.Argument(
        help="Grade the final submission of this run (instead of --task/--submission).")] = None,
    task: Annotated[str | None, typer.Option(
        "--task", "-t", help="Bundled task name or task directory.")] = None,
    submission: Annotated[Path | None, typer.Option(
        "--submission", "-s", help="The submission CSV to grade.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", help="Also write the report as JSON to this file.")] = None,
    db: Annotated[str | None, typer.Option(
        "--db", help="Event database, for RUN_ID (default $ENGINE_DB or ./engine-runs/engine.db).")] = None,
    tasks_dir_opt: Annotated[Path | None, typer.Option(
        "--tasks-dir", help="Where bundled tasks are prepared (default $ENGINE_TASKS_DIR or "
                            "./engine-runs/tasks).")] = None,
) -> None:
    """Grade a submission against a task's private answers (exit 0 valid, 1 invalid, 2 error)."""
    if run_id is not None:
        if task is not None or submission is not None:
            _fail("give either RUN_ID or --task and --submission, not both")
        loaded, submission = _locate_run(run_id, db)
    else:
        if task is None or submission is None:
            missing = " and ".join(n for n, v in (("--task", task), ("--submission", submission))
                                   if v is None)
            _fail(f"missing {missing}: use `engine grade --task TASK --submission FILE` "
                  "or `engine grade RUN_ID`")
        try:
            from engine.tasks import resolve_task

            loaded = resolve_task(task, tasks_dir(tasks_dir_opt))
        except (TaskError, OSError) as exc:
            _fail(str(exc))
    try:
        from engine.grading.grader import grade_submission

        report = grade_submission(loaded, submission)
    except (TaskError, OSError) as exc:
        _fail(str(exc))
    if output is not None:
        try:
            output.parent.mkdir(parents=True, exist_ok=True)
            output.write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            _fail(f"cannot write the report to {output}: {exc}")
    if json_out:
        typer.echo(report.model_dump_json(indent=2))
    else:
        _print_report(report)
    if not report.valid_submission:
        raise typer.Exit(1)
