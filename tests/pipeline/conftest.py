from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture()
def task_dir(tmp_path: Path) -> Path:
    """A tiny plain task directory (description, task.yaml, train/test/sample submission)."""
    d = tmp_path / "task"
    d.mkdir()
    (d / "description.md").write_text("# Tiny\nPredict y.\n\n## Evaluation\nSubmissions are scored by accuracy.\n")
    (d / "task.yaml").write_text("competition_id: tiny\ntask_type: classification\nevaluation_metric: accuracy\n"
                                 "metric_direction: maximize\ntarget_column: y\nid_column: id\n")
    (d / "train.csv").write_text("id,x,y\n1,0.1,0\n2,0.9,1\n3,0.2,0\n")
    (d / "test.csv").write_text("id,x\n4,0.8\n5,0.3\n")
    (d / "sample_submission.csv").write_text("id,y\n4,0\n5,0\n")
    return d
