"""Whether a task's features hold free text, read off its public files before any script runs.

A task with a free-text feature gets a ``text`` setting in its DATA gene from its first draft on:
its scripts read the text as TF-IDF through linear models (``script_blocks/text_features.py``).
A task without one keeps the gene, and so its scripts, as they were. What counts as free text is
``engine/tasks/columns.py``'s rule, the one ``engine tasks init`` and ``check`` use.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pandas as pd

from engine.tasks.columns import modality

# The rows read to judge a column, as the scripts judge theirs (data.py's text_columns).
ROWS_READ = 500
# The first draft's setting: every linear model weighed, words and characters, a vocabulary the
# scripts bound further by their rows and the time left.
DEFAULT_TEXT = {"model": "auto", "ngrams": "word+char", "vocabulary": 30000}
TEXT_MODELS = ("logistic", "ridge", "svm", "nb")
TEXT_NGRAMS = ("word", "char", "word+char")


@functools.cache
def _text_features(task_dir: str) -> tuple[str, ...]:
    base = Path(task_dir)
    try:
        train = pd.read_csv(base / "train.csv", nrows=ROWS_READ)
        test_cols = list(pd.read_csv(base / "test.csv", nrows=0).columns)
    except (OSError, ValueError, UnicodeDecodeError):
        return ()
    return tuple(c for c in train.columns if c in test_cols and modality(train[c]) == "text")


def text_features(task_dir: str | Path | None) -> tuple[str, ...]:
    """The free-text feature columns of the task in ``task_dir`` (train and test both hold them)."""
    return _text_features(str(task_dir)) if task_dir else ()


def with_text(spec: dict[str, Any], task_dir: str | Path | None) -> dict[str, Any]:
    """The spec with the first draft's text setting when the task has free text; else as it is."""
    if text_features(task_dir) and "text" not in spec["data"]:
        spec["data"]["text"] = dict(DEFAULT_TEXT)
    return spec

# The vocabularies the search moves among (each n-gram kind's cap; scripts bound it further).
TEXT_VOCABULARIES = (10000, 30000, 100000)
