"""Tasks: loading task directories, bundled tasks prepared from packaged datasets, baselines.

Public API::

    load_task(path) -> LoadedTask
    list_bundled() -> list[BundledTaskInfo]
    bundled_names() -> list[str]
    prepare_bundled(name, dest) -> Path
    resolve_task(spec, dest_dir) -> LoadedTask
    naive_baseline_score(task) -> float
    write_task_json(task) -> Path
"""

from importlib import import_module
from typing import Any

from engine.tasks.model import Leaderboard, LoadedTask, ScoringSpec, TaskError, TaskMeta

# Loading, preparing and scoring need pandas and scikit-learn (over a second to import); every
# `engine` command imports this package, most never touch a dataset. So those parts load on use.
_LAZY = {
    "naive_baseline_score": "engine.tasks.baseline",
    "BundledTaskInfo": "engine.tasks.bundled",
    "bundled_names": "engine.tasks.bundled",
    "list_bundled": "engine.tasks.bundled",
    "prepare_bundled": "engine.tasks.bundled",
    "resolve_task": "engine.tasks.bundled",
    "load_task": "engine.tasks.loader",
    "write_task_json": "engine.tasks.meta_io",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'engine.tasks' has no attribute {name!r}")


__all__ = [
    "BundledTaskInfo",
    "Leaderboard",
    "LoadedTask",
    "ScoringSpec",
    "TaskError",
    "TaskMeta",
    "bundled_names",
    "list_bundled",
    "load_task",
    "naive_baseline_score",
    "prepare_bundled",
    "resolve_task",
    "write_task_json",
]
