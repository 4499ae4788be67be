"""A task's feature columns by modality, read off its public files before any script runs.

The retriever and the first draft adapt to what the features are: free text gets a text gene
(``text_task``), category columns a booster draft that takes them natively (``retrieval``).
A feature is a column train.csv and test.csv both hold, but for the sample submission's id;
its modality is ``engine/tasks/columns.py``'s rule, the one ``engine tasks init`` and ``check`` use.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pandas as pd

from engine.tasks.columns import modality

# The rows read to judge a column, as the scripts judge theirs (data.py's text_columns).
ROWS_READ = 500


@functools.cache
def _modalities(task_dir: str) -> tuple[tuple[str, str], ...]:
    base = Path(task_dir)
    try:
        train = pd.read_csv(base / "train.csv", nrows=ROWS_READ)
        test_cols = list(pd.read_csv(base / "test.csv", nrows=0).columns)
        id_cols = list(pd.read_csv(base / "sample_submission.csv", nrows=0).columns)[:1]
    except (OSError, ValueError, UnicodeDecodeError):
        return ()
    return tuple((c, modality(train[c])) for c in train.columns if c in test_cols and c not in id_cols)


def feature_columns(task_dir: str | Path | None, of: str) -> tuple[str, ...]:
    """The feature columns of modality ``of`` (numeric, categorical, text, image) of the task in
    ``task_dir``; () when there is none or the files cannot be read."""
    return tuple(c for c, m in _modalities(str(task_dir)) if m == of) if task_dir else ()
