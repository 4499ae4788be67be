"""``engine campaign start|status|report``: a grid of runs driven as one unit on Ray.

Exit codes: 0 every run completed, 1 a run failed or was abandoned (or is not finished, for
``status``), 2 a usage or input error. See README, "Running a campaign on a cluster".
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from engine.campaign.plan import CampaignError, CampaignRequest, check_request, parse_seeds, split_list
from engine.campaign.stream import CampaignState, fold_campaign, stream_id
from engine.run import lifecycle as runs_mod
from replay.state import fold
from store.base import EventStore

campaign_app = typer.Typer(no_args_is_help=True, help="Campaigns: tasks × seeds run as one unit on Ray.")
out = Console()
err = Console(stderr=True)

DbOpt = typer.Option(None, "--db", help="Event database: a file or a postgresql:// URL (default $ENGINE_DB or "
                     "./engine-runs/engine.db). A cluster needs a database every node reaches: PostgreSQL.")


def _fail(message: str, code: int = 2) -> NoReturn:
    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def _open(db: str | None, *, create: bool) -> tuple[EventStore, Path | runs_mod.DatabaseUrl]:
    path = runs_mod.db_path(db)
    if not create and not path.exists():
        _fail(f"no engine database at {path}; start a campaign first or pass --db")
    return runs_mod.open_store(path, create=create), path


def _campaign(store: Any, name: str) -> CampaignState:
    from store.base import RunNotFound

    try:
        state = fold_campaign(store.read(stream_id(name)) if store.get_run(stream_id(name)) else [])
    except RunNotFound:
        state = CampaignState()
    if not state.planned:
        _fail(f"no campaign {name!r} in this database; `engine campaign start {name} --tasks … --seeds …` starts it")
    return state


@campaign_app.command("start")
def start(
    name: str = typer.Argument(..., help="The campaign's name; the same command again continues it."),
    tasks: str | None = typer.Option(None, "--tasks", help="Bundled task names or task directories, comma-separated. "
                                        "Leave out to continue a recorded campaign as planned."),
    seeds: str = typer.Option("0", "--seeds", help="Seeds: 0,1,2 or 0-4."),
    strategy: str = typer.Option("mle-star", "--strategy", help="mle-star | evolve | module:function (comma-separated for several)."),
    preset: str = typer.Option("quick", "--preset", help="paper | quick | time (comma-separated for several)."),
    agent: str = typer.Option("builtin", "--agent", help="builtin | claude | openai | … (comma-separated for several)."),
    set_: list[str] = typer.Option([], "--set", help="Override a setting of every run: key=value (repeatable)."),
    time_limit: int | None = typer.Option(None, "--time-limit", help="Seconds for each run."),
    max_budget: float | None = typer.Option(None, "--max-budget", help="US dollars for each run's agent calls."),
    sandbox: str | None = typer.Option(None, "--sandbox", help="auto | bwrap | none, as for engine start."),
    cpus_per_run: float = typer.Option(1.0, "--cpus-per-run", help="CPUs Ray reserves for each run's driver."),
    gpus_per_run: float | None = typer.Option(None, "--gpus-per-run",
                                                 help="GPUs per run (default: 1 when the cluster has GPUs, else 0)."),
    max_attempts: int = typer.Option(3, "--max-attempts", help="Attempts per run before the campaign gives up on it."),
    ray_address: str | None = typer.Option(None, "--ray-address",
                                              help="A running Ray cluster (ray://host:10001 or host:6379); "
                                                   "default: start Ray on this machine."),
    json_out: bool = typer.Option(False, "--json", help="Print the final status as JSON."),
    db: str | None = DbOpt,
) -> None:
    """Plan a campaign and drive it to the end, or continue it after a crash."""
    from engine.campaign.runner import CampaignRunner, RunnerOptions, address_problem

    request = None
    try:
        if tasks is not None:
            settings: dict[str, Any] = {k: v for k, v in {"overrides": list(set_), "time_limit_seconds": time_limit,
                                                            "max_budget_usd": max_budget, "sandbox": sandbox}.items()
                                        if v not in (None, [])}
            request = _request(name, tasks, seeds, strategy, preset, agent, settings, cpus_per_run, gpus_per_run)
        if max_attempts < 1:
            raise CampaignError(f"--max-attempts {max_attempts}: must be at least 1")
        unreachable = address_problem(ray_address) if ray_address else None
        if unreachable:
            raise CampaignError(unreachable)
    except CampaignError as exc:
        _fail(str(exc))
    path = runs_mod.db_path(db)
    if ray_address and not isinstance(path, runs_mod.DatabaseUrl):
        err.print(f"[yellow]warning:[/] the database {path} is a file: only workers on this machine can reach it; "
                  "a cluster needs --db postgresql://…", highlight=False)
    store, path = _open(db, create=True)
    runner = CampaignRunner(store, path, name, RunnerOptions(ray_address=ray_address, max_attempts=max_attempts),
                            progress=lambda line: err.print(escape(line), highlight=False))
    started = time.monotonic()
    try:
        state = runner.run(request)
    except CampaignError as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        _fail(f"campaign {name} interrupted; run the same command to continue it", 130)
    _report(name, status_rows(store, state), json_out, time.monotonic() - started)


def _request(name: str, tasks: str, seeds: str, strategy: str, preset: str, agent: str, settings: dict[str, Any],
             cpus_per_run: float, gpus_per_run: float | None) -> CampaignRequest:
    """The campaign ``start`` plans, from its options (checked; CampaignError names what is wrong)."""
    request = CampaignRequest(name=name, tasks=split_list("--tasks", tasks), seeds=parse_seeds(seeds),
                              strategies=split_list("--strategy", strategy),
                              presets=split_list("--preset", preset), agents=split_list("--agent", agent),
                              settings=settings, cpus_per_run=cpus_per_run, gpus_per_run=gpus_per_run)
    check_request(request)
    return request


def _report(name: str, rows: list[dict[str, Any]], json_out: bool, took_s: float) -> None:
    """The campaign's final status; exit code 1 unless every run completed."""
    if json_out:
        out.print_json(json.dumps({"name": name, "runs": rows}))
    else:
        _print_status(name, rows)
        err.print(f"campaign {name}: {_counts(rows)} in {took_s:.0f}s", highlight=False)
    if any(r["status"] != "completed" for r in rows):
        raise typer.Exit(1)


@campaign_app.command("status")
def status(name: str, json_out: bool = typer.Option(False, "--json"), db: str | None = DbOpt) -> None:
    """Where each run of the campaign stands."""
    store, _ = _open(db, create=False)
    rows = status_rows(store, _campaign(store, name))
    if json_out:
        out.print_json(json.dumps({"name": name, "runs": rows}))
    else:
        _print_status(name, rows)
    if any(r["status"] != "completed" for r in rows):
        raise typer.Exit(1)


@campaign_app.command("report")
def report(name: str, json_out: bool = typer.Option(False, "--json"),
           output: Path | None = typer.Option(None, "-o", "--output", help="Write a self-contained HTML page."),
           db: str | None = DbOpt) -> None:
    """Scores per task over seeds (mean ± SE), medals, wall time and cost, failures."""
    from engine.campaign.tally import build_report, render_terminal, report_json
    from engine.campaign.tally_html import render_html

    store, _ = _open(db, create=False)
    built = build_report(store, _campaign(store, name))
    if output is not None:
        output.write_text(render_html(built), encoding="utf-8")
        err.print(f"report written to {output}", highlight=False)
    if json_out:
        out.print_json(json.dumps(report_json(built)))
    elif output is None:
        render_terminal(built, out)


def status_rows(store: Any, state: CampaignState) -> list[dict[str, Any]]:
    """One row per cell: the campaign's record joined with the run's own log."""
    rows = []
    for c in state.cells.values():
        row: dict[str, Any] = {**c.cell.model_dump(), "run_id": c.run_id, "attempts": c.attempts,
                               "failures": list(c.failures), "status": c.ended or "planned", "reason": c.reason,
                               "best_score": None, "elapsed_seconds": None, "cost_usd": None}
        if c.run_id is not None:
            run = fold(store.read(c.run_id))
            if c.ended is None:
                row["status"] = run.status
            row.update(best_score=run.best_score, elapsed_seconds=round(run.elapsed_seconds, 1),
                       cost_usd=run.accumulated_cost_usd)
            if c.ended != "abandoned" and run.error and not row["reason"]:
                row["reason"] = run.error
        rows.append(row)
    return rows


def _counts(rows: list[dict[str, Any]]) -> str:
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    return ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))


def _print_status(name: str, rows: list[dict[str, Any]]) -> None:
    colours = {"completed": "green", "failed": "red", "abandoned": "red"}
    # The grid's fixed dimensions go in the title; only those that vary get a column.
    varying = [k for k in ("strategy", "preset", "agent") if len({r[k] for r in rows}) > 1]
    fixed = ", ".join(f"{k} {rows[0][k]}" for k in ("strategy", "preset", "agent") if k not in varying) if rows else ""
    table = Table(title=escape(f"campaign {name}: {_counts(rows)}" + (f" ({fixed})" if fixed else "")))
    for col in ("task", "seed", *varying, "run", "status", "tries", "best", "time", "cost", "why"):
        table.add_column(col, overflow="fold")
    for r in rows:
        colour = colours.get(r["status"], "yellow")
        best = "" if r["best_score"] is None else f"{r['best_score']:.5g}"
        table.add_row(escape(r["task"]), str(r["seed"]), *(escape(str(r[k])) for k in varying),
                      escape(r["run_id"] or "-"), f"[{colour}]{r['status']}[/]", str(r["attempts"]), best,
                      "" if r["elapsed_seconds"] is None else f"{r['elapsed_seconds']:.0f}s",
                      "" if r["cost_usd"] is None else f"${r['cost_usd']:.2f}",
                      escape(r["reason"] or (r["failures"][-1] if r["failures"] else "")))
    out.print(table)
