"""In an 80-column terminal `engine grade` and `engine status` fold a long submission path over
lines instead of cutting it to `…`: it is what a user copies to open the submission."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from engine.cli.main import app
from tests.tasks import folders

runner = CliRunner()
FIXTURE = Path(__file__).resolve().parents[1] / "replays" / "mle-star-breast-cancer-claude-note-v1.jsonl"


def _value_column(output: str) -> str:
    """The second column of a two-column table, its folded pieces joined again."""
    cells = [line.split("│")[2].strip() for line in output.splitlines() if line.count("│") == 3]
    return "".join(cells)


def test_grade_prints_the_whole_submission_path_in_80_columns(tmp_path):
    root = folders.regression(tmp_path / "task")
    (root / "public").mkdir()
    for name in ("description.md", "train.csv", "test.csv", "sample_submission.csv"):
        (root / name).rename(root / "public" / name)
    (root / "private").mkdir()
    sample = pd.read_csv(root / "public" / "sample_submission.csv")
    sample.assign(y=1.0).to_csv(root / "private" / "answers.csv", index=False)
    deep = tmp_path / ("a-folder-with-a-long-name-" * 3) / "submissions" / "final"
    deep.mkdir(parents=True)
    sample.to_csv(deep / "submission.csv", index=False)
    result = runner.invoke(app, ["grade", "--task", str(root), "--submission", str(deep / "submission.csv")],
                           env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "…" not in result.output
    assert str(deep / "submission.csv") in _value_column(result.output)


def test_status_prints_the_whole_submission_path_in_80_columns(tmp_path):
    db = tmp_path / "engine.db"
    imported = runner.invoke(app, ["import", str(FIXTURE), "--db", str(db)])
    assert imported.exit_code == 0, imported.output
    result = runner.invoke(app, ["status", "fixture-mle-star-breast-cancer-claude-note-v1", "--db", str(db)],
                           env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "…" not in result.output
    assert ("/fixture-mle-star-breast-cancer-claude-note-v1/evals/final__test__eval-de56fd56/final/submission.csv"
            in _value_column(result.output))
