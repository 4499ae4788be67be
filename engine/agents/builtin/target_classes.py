"""How many classes a task's target has, read off its public files before any script runs.

The retriever orders its models by what a draft will cost, and on classification that cost
depends on the class count: a boosting round grows one tree per class, a forest's tree serves
them all. The target is found the way the scripts find it (``render_data``): the sample
submission's one column that train.csv also has, else one probability column per class.
"""

from __future__ import annotations

import csv
from pathlib import Path

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
