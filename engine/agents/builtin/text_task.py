"""Whether a task's features hold free text, read off its public files before any script runs.

A task with a free-text feature gets a ``text`` setting in its DATA gene from its first draft on:
its scripts read the text as TF-IDF through linear models (``script_blocks/text_features.py``).
A task without one keeps the gene, and so its scripts, as they were. What counts as free text is
``engine/tasks/columns.py``'s rule, the one ``engine tasks init`` and ``check`` use.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.agents.builtin.feature_columns import feature_columns

# The first draft's setting: every linear model weighed, words and characters, a vocabulary the
# scripts bound further by their rows and the time left.
DEFAULT_TEXT = {"model": "auto", "ngrams": "word+char", "vocabulary": 30000}
TEXT_MODELS = ("logistic", "ridge", "svm", "nb")
TEXT_NGRAMS = ("word", "char", "word+char")


def text_features(task_dir: str | Path | None) -> tuple[str, ...]:
    """The free-text feature columns of the task in ``task_dir`` (train and test both hold them)."""
    return feature_columns(task_dir, "text")


def with_text(spec: dict[str, Any], task_dir: str | Path | None) -> dict[str, Any]:
    """The spec with the first draft's text setting when the task has free text; else as it is."""
    if text_features(task_dir) and "text" not in spec["data"]:
        spec["data"]["text"] = dict(DEFAULT_TEXT)
    return spec

# The vocabularies the search moves among (each n-gram kind's cap; scripts bound it further).
TEXT_VOCABULARIES = (10000, 30000, 100000)
