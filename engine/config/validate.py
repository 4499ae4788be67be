"""REQ-OR-002: check a run's inputs before anything is written (no database, no event).

``engine start`` calls :func:`validate_start` right after building the configuration; a
problem exits with code 2 and says what is wrong and how to fix it. The library
(``engine.api``) calls the same checks and raises :class:`InputError` (a ``ValueError``, as
the spec asks) before any agent call.

What is checked:

* the task: a bundled task name, or a directory that loads as a task (description.md, a
  metric, …) and holds at least one data file besides its description and metadata; a
  ``TaskDescription`` must have a non-empty ``competition_id`` and description and a
  ``data_dir`` that exists and holds at least one file;
* the configuration: a well-formed ``PipelineConfig`` (every count positive, REQ-DM-002);
* the strategy: a known name or an importable ``module:function``;
* the time limit: long enough for one candidate and finalization
  (``handlers.timebudget.shortest_workable_limit_s``, the time plan's own rule); a shorter one is
  refused with the shortest workable limit (a start-up that left less than that is refused by
  ``engine.run.lifecycle.time_left_problems``, on the run's clock);
* the budget: enough for one candidate and finalization (``handlers.money.least_budget_usd``)
  unless the agent costs nothing; a smaller one is refused with the least that would do.
"""

from __future__ import annotations

from pathlib import Path

from events.domain import PipelineConfig, TaskDescription

METADATA_FILES = frozenset({"description.md", "task.yaml", "task.yml", "task.json"})


class InputError(ValueError):
    """The run's inputs are unusable; the message lists every problem found."""


def _data_files(directory: Path) -> list[Path]:
    return [p for p in directory.rglob("*") if p.is_file() and p.name not in METADATA_FILES]


def task_spec_problems(spec: str) -> list[str]:
    """Problems with ``--task`` (a bundled name or a task directory)."""
    from engine.tasks import TaskError, load_task
    from engine.tasks.bundled import SPECS

    if not spec or not spec.strip():
        return ["--task is empty: give a bundled task name or a task directory"]
    path = Path(spec).expanduser()
    if spec in SPECS and not path.exists():
        return []
    if not path.exists():
        return [f"--task {spec}: neither a bundled task ({', '.join(SPECS)}) nor an existing directory"]
    if not path.is_dir():
        return [f"--task {spec}: {path} is a file, not a task directory"]
    try:
        loaded = load_task(path)
    except TaskError as exc:
        return [f"--task {spec}: {exc}"]
    problems = list(task_problems(loaded.description, data_dir=Path(loaded.public_dir)))
    return [f"--task {spec}: {p}" for p in problems]


def task_problems(task: TaskDescription, *, data_dir: Path | None = None) -> list[str]:
    """REQ-OR-002 items 1 and 3 for a ``TaskDescription`` (``data_dir`` overrides its field)."""
    problems = []
    if not task.competition_id.strip():
        problems.append("competition_id is empty")
    if not task.description.strip():
        problems.append("the task description is empty")
    if not task.evaluation_metric.strip():
        problems.append("evaluation_metric is empty")
    directory = Path(data_dir if data_dir is not None else task.data_dir).expanduser()
    if not directory.exists():
        problems.append(f"data directory {directory} does not exist")
    elif not directory.is_dir():
        problems.append(f"data directory {directory} is not a directory")
    elif not _data_files(directory):
        problems.append(f"data directory {directory} holds no data files")
    return problems


def config_problems(config: PipelineConfig | dict) -> list[str]:
    """REQ-OR-002 item 2 (REQ-DM-002): re-validated, so a model built with ``model_construct``
    or mutated cannot slip through."""
    from pydantic import ValidationError

    data = config.model_dump() if isinstance(config, PipelineConfig) else config
    try:
        PipelineConfig.model_validate(data)
    except ValidationError as exc:
        return [f"config {'.'.join(str(x) for x in e['loc']) or ''}: {e['msg']} (got {e.get('input')!r})"
                for e in exc.errors()]
    return []


def time_problems(config: PipelineConfig) -> list[str]:
    """A limit too short for even one candidate and finalization, with the shortest that works."""
    from handlers.timebudget import shortest_workable_limit_s

    shortest = shortest_workable_limit_s(config)
    if config.time_limit_seconds >= shortest:
        return []
    return [f"--time-limit {config.time_limit_seconds} s is too short for one candidate and finalization: "
            f"the shortest workable time limit is {shortest} s"]


# Backends whose calls cost nothing: a budget never stops them, so any budget will do.
FREE_AGENTS = ("builtin", "replay:")


def budget_problems(config: PipelineConfig, strategy: str, agent: str = "auto") -> list[str]:
    """A budget too small for one candidate and finalization, with the least that would do
    (``handlers.money.least_budget_usd``), refused before anything runs (not even the backend's
    start-up check): spending it would buy no submission."""
    from handlers.money import least_budget_usd

    budget = config.max_budget_usd
    if budget is None or agent.startswith(FREE_AGENTS):
        return []
    least = least_budget_usd(strategy)
    if budget >= least:
        return []
    return [f"--max-budget {budget:g} (max_budget_usd ${budget:g}) cannot pay for one candidate and finalization: "
            f"the least budget that would do is ${least:g} (--max-budget {least:g})"]


def strategy_problems(strategy: str) -> list[str]:
    from engine.run.strategies import StrategyError, load_strategy

    try:
        load_strategy(strategy)
    except StrategyError as exc:
        return [str(exc)]
    return []


def raise_if(problems: list[str]) -> None:
    if problems:
        raise InputError("invalid input: " + "; ".join(problems) if len(problems) == 1 else
                         "invalid input:\n  - " + "\n  - ".join(problems))


def validate_start(task_spec: str, config: PipelineConfig, *, strategy: str = "mle-star", agent: str = "auto") -> None:
    """Everything ``engine start`` needs checked before it opens the database."""
    problems = config_problems(config)
    raise_if(problems + (time_problems(config) + budget_problems(config, strategy, agent) if not problems else [])
             + strategy_problems(strategy) + task_spec_problems(task_spec))
