"""Tasks: loading task directories, bundled tasks prepared from packaged datasets, baselines.

Public API::

    load_task(path) -> LoadedTask
    list_bundled() -> list[BundledTaskInfo]
    prepare_bundled(name, dest) -> Path
    resolve_task(spec, dest_dir) -> LoadedTask
    naive_baseline_score(task) -> float
    write_task_json(task) -> Path
"""

from engine.tasks.baseline import naive_baseline_score
from engine.tasks.bundled import BundledTaskInfo, list_bundled, prepare_bundled, resolve_task
from engine.tasks.loader import load_task
from engine.tasks.meta_io import write_task_json
from engine.tasks.model import Leaderboard, LoadedTask, ScoringSpec, TaskError, TaskMeta

__all__ = [
    "BundledTaskInfo",
    "Leaderboard",
    "LoadedTask",
    "ScoringSpec",
    "TaskError",
    "TaskMeta",
    "list_bundled",
    "load_task",
    "naive_baseline_score",
    "prepare_bundled",
    "resolve_task",
    "write_task_json",
]
