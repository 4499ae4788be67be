"""How many classes a task's target has, read off its public files before any script runs.

The retriever orders its models by what a draft will cost, and on classification that cost
depends on the class count: a boosting round grows one tree per class, a forest's tree serves
them all. The target is found the way the scripts find it (``render_data``): the sample
submission's one column that train.csv also has, else one probability column per class.
"""

from __future__ import annotations

import csv
from pathlib import Path

import yaml

# Past this many distinct labels the count is "many" whatever its exact value; reading stops.
COUNT_UP_TO = 10_000


def class_count(task_dir: str | Path) -> int | None:
    """The number of classes of ``task_dir``'s target, or None when the files do not say."""
    base = Path(task_dir)
    sample, train = base / "sample_submission.csv", base / "train.csv"
    try:
        sub_cols = _header(sample)[1:]
        train_cols = _header(train)
    except (OSError, UnicodeDecodeError, csv.Error):
        return None
    if len(sub_cols) == 1 and sub_cols[0] in train_cols:
        try:
            return _distinct_values(train, train_cols.index(sub_cols[0]))
        except (OSError, UnicodeDecodeError, csv.Error):
            return None
    return len(sub_cols) if len(sub_cols) > 1 else None


def _header(path: Path) -> list[str]:
    with path.open(newline="", encoding="utf-8", errors="strict") as fh:
        return [c.strip() for c in next(csv.reader(fh), [])]


def _distinct_values(path: Path, column: int) -> int | None:
    seen: set[str] = set()
    with path.open(newline="", encoding="utf-8", errors="replace") as fh:
        rows = csv.reader(fh)
        next(rows, None)
        for row in rows:
            if column < len(row) and row[column].strip():
                seen.add(row[column].strip())
                if len(seen) >= COUNT_UP_TO:
                    break
    return len(seen) or None


def target_columns(task_dir: str | Path) -> tuple[str, ...]:
    """The task's target columns when its sample submission asks for two or more of them, else
    (): task.yaml's ``target_columns`` (in the task folder or the one above its public data),
    else the sample's columns that train.csv also has. Either way every sample column must be a
    train.csv column: a sample with one probability column per class is one target."""
    base = Path(task_dir)
    try:
        sub_cols = _header(base / "sample_submission.csv")[1:]
        train_cols = set(_header(base / "train.csv"))
    except (OSError, UnicodeDecodeError, csv.Error):
        return ()
    targets = _declared_targets(base) or tuple(c for c in sub_cols if c in train_cols)
    if len(targets) > 1 and sorted(targets) == sorted(sub_cols) and set(targets) <= train_cols:
        return tuple(targets)
    return ()


def _declared_targets(base: Path) -> tuple[str, ...]:
    for path in (base / "task.yaml", base.parent / "task.yaml"):
        try:
            meta = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            continue
        declared = meta.get("target_columns") if isinstance(meta, dict) else None
        if isinstance(declared, list) and all(isinstance(c, str) for c in declared):
            return tuple(declared)
    return ()
