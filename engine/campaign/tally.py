"""The campaign report: what a campaign measured, ready to quote — per task (and per strategy,
preset and agent when the grid has several) the graded test score over seeds as mean ± standard
error, medal counts where the task has thresholds, wall time and cost per run, and every failure
with its reason. It works mid-campaign: runs not created or still going are shown as such.

``report_json`` keys (stable): ``name``; ``counts`` {status: n}; ``groups`` [{task, strategy,
preset, agent, metric, lower_is_better, runs, graded, mean, se (null for fewer than 2 graded
runs), scores [{seed, score}], medals {gold, silver, bronze, above_median} (null when the task has
no thresholds), thresholds {gold, silver, bronze, median} (those the task has),
mean_wall_seconds, total_cost_usd, mean_cost_usd}]; ``runs`` [{task, seed, strategy, preset, agent,
run_id, status, test_score, valid_submission, medal, grader, wall_seconds (start-up to last event),
driven_seconds, cost_usd, agent_calls, attempts}]; ``failures`` [{run_id, task, seed, kind, reason}].
"""

from __future__ import annotations

import math
import statistics
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from engine.campaign.stream import CampaignState, CellState
from replay.state import fold
from store.base import RunNotFound

_FROZEN = ConfigDict(frozen=True)
MEDALS = ("gold", "silver", "bronze")


class RunRow(BaseModel):
    model_config = _FROZEN

    task: str
    seed: int
    strategy: str
    preset: str
    agent: str
    run_id: str | None
    status: str  # planned | running | stopped | completed | failed | abandoned
    test_score: float | None = None
    valid_submission: bool | None = None
    medal: str | None = None  # gold | silver | bronze | None
    above_median: bool | None = None
    thresholds: dict[str, float] = {}  # gold/silver/bronze/median, those the task has
    metric: str = ""
    lower_is_better: bool = False
    grader: str | None = None
    wall_seconds: float | None = None
    driven_seconds: float | None = None
    cost_usd: float | None = None
    agent_calls: int | None = None
    attempts: int = 0


class FailedRun(BaseModel):
    model_config = _FROZEN

    run_id: str | None
    task: str
    seed: int
    kind: str  # run failed | no submission | invalid submission | not graded | abandoned | attempt failed | missing run
    reason: str


class GroupRow(BaseModel):
    model_config = _FROZEN

    task: str
    strategy: str
    preset: str
    agent: str
    metric: str
    lower_is_better: bool
    runs: int
    graded: int
    mean: float | None
    se: float | None
    scores: list[tuple[int, float]]
    medals: dict[str, int] | None
    thresholds: dict[str, float]
    mean_wall_seconds: float | None
    total_cost_usd: float
    mean_cost_usd: float | None


class CampaignReport(BaseModel):
    model_config = _FROZEN

    name: str
    counts: dict[str, int]
    groups: list[GroupRow]
    runs: list[RunRow]
    failures: list[FailedRun]


def mean_and_se(values: list[float]) -> tuple[float | None, float | None]:
    """Mean and standard error of the mean (sample sd / √n); the SE of one value is undefined."""
    if not values:
        return None, None
    mean = statistics.fmean(values)
    return mean, (statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else None)


def _graded_row(store: Any, cell: CellState, failures: list[FailedRun]) -> RunRow:
    from engine.grading.grader import grade_submission
    from engine.run.lifecycle import task_of_run
    from engine.tasks import TaskError

    c = cell.cell
    base: dict[str, Any] = dict(task=c.task, seed=c.seed, strategy=c.strategy, preset=c.preset, agent=c.agent,
                                run_id=cell.run_id, attempts=cell.attempts, status=cell.ended or "planned")

    def fail(kind: str, reason: str) -> None:
        failures.append(FailedRun(run_id=cell.run_id, task=c.task, seed=c.seed, kind=kind, reason=reason))

    for number, reason in enumerate(cell.failures, start=1):
        fail("attempt failed", f"attempt {number}: {reason}")
    if cell.run_id is None:
        return RunRow(**base)
    try:
        log = list(store.read(cell.run_id))
    except RunNotFound:
        fail("missing run", f"the campaign recorded run {cell.run_id} but the store has no such run")
        return RunRow(**{**base, "status": "missing"})
    run = fold(log)
    status = cell.ended if cell.ended == "abandoned" else run.status
    # Wall time spans the run's start-up (before its first event: RunStarted's elapsed_s) to its
    # last event (downtime between attempts included); driven time is what its drivers spent, the
    # start-up included (what time limits count).
    wall = (datetime.fromisoformat(log[-1].recorded_at) - datetime.fromisoformat(log[0].recorded_at)).total_seconds() \
        + float(log[0].payload.get("elapsed_s") or 0.0) if log else None
    base.update(status=status, wall_seconds=wall, driven_seconds=round(run.elapsed_seconds, 3),
                cost_usd=run.accumulated_cost_usd, agent_calls=run.agent_call_count)
    if status == "abandoned":
        fail("abandoned", cell.reason)
    elif status == "failed":
        fail("run failed", run.error or "the run failed without a message")
    if status != "completed":
        return RunRow(**base)
    if not run.submission_path:
        fail("no submission", "the run completed without a submission")
        return RunRow(**base)
    try:
        report = grade_submission(task_of_run(Path(run.run_dir), Path(run.task_dir)), run.submission_path)
    except TaskError as exc:
        fail("not graded", str(exc))
        return RunRow(**base)
    if not report.valid_submission:
        fail("invalid submission", report.reason or "invalid")
    medal = next((m for m in MEDALS if getattr(report, f"{m}_medal")), None)
    return RunRow(**base, test_score=report.score if report.valid_submission else None,
                  valid_submission=report.valid_submission, medal=medal, above_median=report.above_median,
                  thresholds={m: t for m in (*MEDALS, "median")
                              if (t := getattr(report, f"{m}_threshold")) is not None},
                  metric=report.metric, lower_is_better=report.is_lower_better, grader=report.grader)


def _group(rows: list[RunRow]) -> GroupRow:
    first = rows[0]
    graded = [r for r in rows if r.test_score is not None]
    mean, se = mean_and_se([r.test_score for r in graded if r.test_score is not None])
    walls = [r.wall_seconds for r in rows if r.wall_seconds is not None and r.status in ("completed", "failed")]
    costs = [r.cost_usd for r in rows if r.cost_usd is not None]
    thresholds = next((r.thresholds for r in graded if r.thresholds), {})
    medals = ({m: sum(r.medal == m for r in graded) for m in MEDALS} | {"above_median": sum(bool(r.above_median)
                                                                                           for r in graded)}
              if thresholds else None)
    return GroupRow(task=first.task, strategy=first.strategy, preset=first.preset, agent=first.agent,
                    metric=next((r.metric for r in graded), ""), lower_is_better=any(r.lower_is_better for r in graded),
                    runs=len(rows), graded=len(graded), mean=mean, se=se,
                    scores=[(r.seed, r.test_score) for r in graded if r.test_score is not None], medals=medals,
                    thresholds=thresholds,
                    mean_wall_seconds=statistics.fmean(walls) if walls else None, total_cost_usd=sum(costs),
                    mean_cost_usd=statistics.fmean(costs) if costs else None)


def build_report(store: Any, state: CampaignState) -> CampaignReport:
    failures: list[FailedRun] = []
    rows = [_graded_row(store, cell, failures) for cell in state.cells.values()]
    groups: dict[tuple[str, str, str, str], list[RunRow]] = {}
    for r in rows:  # plan order: tasks in the order given
        groups.setdefault((r.task, r.strategy, r.preset, r.agent), []).append(r)
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.status] = counts.get(r.status, 0) + 1
    return CampaignReport(name=state.name, counts=counts, groups=[_group(g) for g in groups.values()], runs=rows,
                          failures=failures)


def report_json(report: CampaignReport) -> dict[str, Any]:
    data = report.model_dump(mode="json")
    for g in data["groups"]:
        g["scores"] = [{"seed": seed, "score": score} for seed, score in g["scores"]]
    for r in data["runs"]:
        for internal in ("above_median", "thresholds", "metric", "lower_is_better"):
            r.pop(internal)
    return data


def fmt(value: float | None, digits: int = 5) -> str:
    return "-" if value is None else f"{value:.{digits}g}"


def mean_pm_se(g: GroupRow) -> str:
    if g.mean is None:
        return "-"
    return f"{fmt(g.mean)} ± {fmt(g.se, 2)}" if g.se is not None else f"{fmt(g.mean)} (n=1, no SE)"


def varying_dimensions(report: CampaignReport) -> list[str]:
    """strategy/preset/agent when the grid has several values of it (else they go in the title)."""
    return [k for k in ("strategy", "preset", "agent") if len({getattr(g, k) for g in report.groups}) > 1]


def render_terminal(report: CampaignReport, console: Console) -> None:
    dims = varying_dimensions(report)
    counts = ", ".join(f"{n} {s}" for s, n in sorted(report.counts.items()))
    table = Table(title=escape(f"campaign {report.name}: {counts}"))
    for col in ("task", *dims, "metric", "runs", "graded", "test score mean ± SE", "medals g/s/b/>med",
                "mean wall", "cost"):
        table.add_column(col, overflow="fold")
    for g in report.groups:
        medals = "/".join(str(g.medals[k]) for k in (*MEDALS, "above_median")) if g.medals else "-"
        better = " (lower better)" if g.lower_is_better else ""
        table.add_row(escape(g.task), *(escape(getattr(g, d)) for d in dims), escape(g.metric + better), str(g.runs),
                      str(g.graded), mean_pm_se(g), medals,
                      "-" if g.mean_wall_seconds is None else f"{g.mean_wall_seconds:.0f}s", f"${g.total_cost_usd:.2f}")
    console.print(table)
    if report.failures:
        failed = Table(title="failures")
        for col in ("run", "task", "seed", "kind", "reason"):
            failed.add_column(col, overflow="fold")
        for f in report.failures:
            failed.add_row(escape(f.run_id or "-"), escape(f.task), str(f.seed), f.kind, escape(f.reason))
        console.print(failed)
