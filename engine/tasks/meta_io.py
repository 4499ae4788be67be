"""Persisting task metadata: the task.json written next to ``public/`` and ``private/``.

Writing it once (for a bundled task, or after loading a real MLE-bench directory with the
help of a task.yaml) means later loads know the metric, columns and leaderboard directly.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from engine.tasks.model import LoadedTask, TaskMeta

TASK_JSON = "task.json"


def dump_meta(meta: TaskMeta) -> bytes:
    """Stable bytes: sorted keys, no nulls, trailing newline."""
    text = json.dumps(meta.model_dump(mode="json", exclude_none=True), indent=2, sort_keys=True)
    return (text + "\n").encode("utf-8")


def write_atomic(path: Path, data: bytes) -> None:
    # Write-then-rename, so a concurrent reader never sees a half-written file.
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def meta_of(task: LoadedTask) -> TaskMeta:
    """The metadata that reloads ``task`` as it is, file names relative to the layout."""
    answers = None
    if task.answers is not None:
        base = task.private_dir if task.private_dir and task.answers.is_relative_to(
            task.private_dir) else task.root
        answers = task.answers.relative_to(base).as_posix()
    d = task.description
    return TaskMeta(
        competition_id=d.competition_id,
        task_type=d.task_type,
        data_modality=d.data_modality,
        evaluation_metric=d.evaluation_metric,
        metric_direction=d.metric_direction,
        id_column=task.id_column,
        target_columns=list(task.target_columns),
        answer_column=task.answer_column,
        positive_class=task.positive_class,
        sample_submission=task.sample_submission.name if task.sample_submission else None,
        answers=answers,
        train_file=task.train_file.name if task.train_file else None,
        test_file=task.test_file.name if task.test_file else None,
        leaderboard=task.leaderboard if task.leaderboard.model_dump(exclude_none=True) else None,
        bundled=task.bundled,
    )


def write_task_json(task: LoadedTask) -> Path:
    """Write task.json beside public/ (or into a plain task directory); returns its path."""
    base = task.public_dir.parent if task.public_dir != task.root else task.root
    path = base / TASK_JSON
    write_atomic(path, dump_meta(meta_of(task)))
    return path
