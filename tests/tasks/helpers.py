"""Helpers shared by the task and grading tests: build small task directories by hand."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import structlog
import yaml

BUNDLED = ["breast-cancer", "wine", "diabetes", "penguins", "iris"]


def write_split_task(root: Path, answers: pd.DataFrame, sample: pd.DataFrame,
                     meta: dict | None = None, description: str = "# T\n\nPredict.\n") -> Path:
    """``root/public`` (description, sample submission, test.csv) + ``root/private/answers.csv``."""
    public, private = root / "public", root / "private"
    public.mkdir(parents=True)
    private.mkdir()
    (public / "description.md").write_text(description)
    sample.to_csv(public / "sample_submission.csv", index=False)
    sample[[sample.columns[0]]].to_csv(public / "test.csv", index=False)
    answers.to_csv(private / "answers.csv", index=False)
    if meta is not None:
        (root / "task.yaml").write_text(yaml.safe_dump(meta))
    return root


def structlog_to_stderr():
    """Route structlog to stderr (as engine.config.logs does) so JSON on stdout stays parseable."""
    saved = structlog.get_config()
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(file=sys.stderr))
    return saved
