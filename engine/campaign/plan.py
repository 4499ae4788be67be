"""Turning ``engine campaign start`` arguments into a checked plan: the grid of cells, the
settings every run shares, and each cell's run id (derived from the cell, so a re-run of the
command finds the runs it made before)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.campaign.stream import CampaignState
from engine.config.presets import ConfigError, build_config
from engine.config.validate import InputError, validate_start
from events.campaign import CampaignCell, CampaignStarted
from events.domain import PipelineConfig
from store.run_ids import check_run_id

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class CampaignError(ValueError):
    """A campaign request that cannot be carried out; the message says what to do instead."""


@dataclass(frozen=True)
class CampaignRequest:
    name: str
    tasks: tuple[str, ...]
    seeds: tuple[int, ...]
    strategies: tuple[str, ...] = ("mle-star",)
    presets: tuple[str, ...] = ("quick",)
    agents: tuple[str, ...] = ("builtin",)
    settings: dict[str, Any] = field(default_factory=dict)
    cpus_per_run: float = 1.0
    gpus_per_run: float | None = None  # None: one GPU per run when the cluster has GPUs

    def cells(self) -> list[CampaignCell]:
        return [CampaignCell(task=t, seed=s, strategy=st, preset=p, agent=a)
                for t in self.tasks for st in self.strategies for p in self.presets for a in self.agents
                for s in self.seeds]


def split_list(option: str, raw: str) -> tuple[str, ...]:
    items = tuple(x.strip() for x in raw.split(",") if x.strip())
    if not items:
        raise CampaignError(f"{option} {raw!r}: give a comma-separated list, e.g. {option} iris,wine")
    if len(set(items)) != len(items):
        raise CampaignError(f"{option} {raw!r}: an item is repeated")
    return items


def parse_seeds(raw: str) -> tuple[int, ...]:
    """``0,1,2`` or a range ``0-4`` (both ends included)."""
    out: list[int] = []
    for item in split_list("--seeds", raw):
        lo, sep, hi = item.partition("-")
        try:
            out += list(range(int(lo), int(hi) + 1)) if sep and lo else [int(item)]
        except ValueError:
            raise CampaignError(f"--seeds {raw!r}: {item!r} is not a seed (integers, e.g. 0,1,2 or 0-4)") from None
    if len(set(out)) != len(out):
        raise CampaignError(f"--seeds {raw!r}: a seed is repeated")
    return tuple(out)


def cell_config(cell: CampaignCell, settings: dict[str, Any]) -> PipelineConfig:
    """The run configuration ``engine start`` would build for this cell."""
    return build_config(preset=cell.preset, overrides=list(settings.get("overrides", [])),
                        extra={"time_limit_seconds": settings.get("time_limit_seconds"),
                               "max_budget_usd": settings.get("max_budget_usd"),
                               "sandbox": settings.get("sandbox")})


def check_request(req: CampaignRequest) -> None:
    """Every problem of the request before anything is written (task, strategy, settings)."""
    if not NAME_RE.match(req.name):
        raise CampaignError(f"campaign name {req.name!r}: use 1-64 letters, digits, '.', '_' or '-', "
                            "starting with a letter or digit")
    if req.cpus_per_run <= 0:
        raise CampaignError(f"--cpus-per-run {req.cpus_per_run}: must be more than 0")
    if req.gpus_per_run is not None and req.gpus_per_run < 0:
        raise CampaignError(f"--gpus-per-run {req.gpus_per_run}: must be 0 or more")
    problems: list[str] = []
    checked: set[tuple[str, str, str]] = set()
    for cell in req.cells():
        combo = (cell.task, cell.strategy, cell.preset)
        if combo in checked:
            continue
        checked.add(combo)
        try:
            validate_start(cell.task, cell_config(cell, req.settings), strategy=cell.strategy)
        except (InputError, ConfigError) as exc:
            problems.append(str(exc))
    if problems:
        raise CampaignError("; ".join(dict.fromkeys(problems)))


def started_event(req: CampaignRequest, gpus_per_run: float) -> CampaignStarted:
    return CampaignStarted(name=req.name, cells=req.cells(), settings=dict(req.settings),
                           cpus_per_run=req.cpus_per_run, gpus_per_run=gpus_per_run)


def same_plan(state: CampaignState, req: CampaignRequest) -> str | None:
    """Why ``req`` is not the campaign already recorded under its name, or None if it is."""
    differences = []
    planned = [c.cell for c in state.cells.values()]
    if planned != req.cells():
        differences.append(f"its grid is {len(planned)} runs ({_grid_summary(planned)}), "
                           f"this command asks for {len(req.cells())} ({_grid_summary(req.cells())})")
    if state.settings != dict(req.settings):
        differences.append(f"its settings are {state.settings}, this command gives {dict(req.settings)}")
    if state.cpus_per_run != req.cpus_per_run:
        differences.append(f"it asks {state.cpus_per_run} CPUs per run, this command {req.cpus_per_run}")
    if req.gpus_per_run is not None and state.gpus_per_run != req.gpus_per_run:
        differences.append(f"it asks {state.gpus_per_run} GPUs per run, this command {req.gpus_per_run}")
    return "; ".join(differences) or None


def _grid_summary(cells: list[CampaignCell]) -> str:
    def values(attr: str) -> str:
        return ",".join(dict.fromkeys(str(getattr(c, attr)) for c in cells))

    return f"tasks {values('task')}, seeds {values('seed')}, strategy {values('strategy')}, " \
           f"preset {values('preset')}, agent {values('agent')}"


def run_id_for(name: str, cell: CampaignCell) -> str:
    """Readable and stable: the campaign, the task's name and the seed, plus a short hash of the
    whole cell so two cells never share a run."""
    label = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(cell.task).name or cell.task).strip("_")[:TASK_LABEL_CHARS]
    digest = hashlib.sha256(cell.key.encode()).hexdigest()[:6]
    return check_run_id(f"{name}-{label or 'task'}-s{cell.seed}-{digest}")


# A task's name is cut to this in its runs' ids: with a campaign name (at most 64) and the seed, the
# id stays within store.run_ids.MAX_RUN_ID_LENGTH; the digest keeps the ids of cut names distinct.
TASK_LABEL_CHARS = 48
