"""`engine grade` on a plain task folder (no public/): answers cannot live there, and the message
says what to do, the split layout, rather than "name the file with `answers:`", which a plain
folder cannot use (the loader then calls the named file a leak)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from engine.cli.main import app

runner = CliRunner()


def _plain_task(root: Path) -> Path:
    root.mkdir()
    (root / "description.md").write_text("# Species\n\n## Evaluation\n\nClassification accuracy.\n")
    (root / "train.csv").write_text("id,x,species\n1,0.1,setosa\n2,0.9,virginica\n3,0.2,setosa\n")
    (root / "test.csv").write_text("id,x\n4,0.15\n5,0.8\n")
    (root / "sample_submission.csv").write_text("id,species\n4,setosa\n5,setosa\n")
    return root


def _grade(root: Path, submission: Path):
    return runner.invoke(app, ["grade", "--task", str(root), "--submission", str(submission)],
                         env={"COLUMNS": "400"})


def test_answers_in_a_plain_folders_private_name_the_split_layout_and_grade_once_moved(tmp_path):
    root = _plain_task(tmp_path / "iris")
    (root / "private").mkdir()
    (root / "private" / "answers.csv").write_text("id,species\n4,setosa\n5,virginica\n")
    refused = _grade(root, root / "sample_submission.csv")
    assert refused.exit_code == 2, refused.output
    assert f"inside the plain task folder {root.resolve()}" in refused.output
    assert str(root.resolve() / "public") in refused.output
    assert "`answers:`" not in refused.output and "Traceback" not in refused.output

    (root / "public").mkdir()  # what the message asks: the data files into public/
    for name in ("description.md", "train.csv", "test.csv", "sample_submission.csv"):
        shutil.move(root / name, root / "public" / name)
    graded = _grade(root, root / "public" / "sample_submission.csv")
    assert graded.exit_code == 0, graded.output
    assert "0.5" in graded.output  # one of the two rows is setosa


def test_a_plain_folder_without_answers_is_told_where_they_go(tmp_path):
    root = _plain_task(tmp_path / "iris")
    refused = _grade(root, root / "sample_submission.csv")
    assert refused.exit_code == 2, refused.output
    assert "has no private answers" in refused.output
    assert str(root.resolve() / "private" / "answers.csv") in refused.output
    assert "`answers:`" not in refused.output and "Traceback" not in refused.output


def test_check_of_a_task_without_answers_says_where_they_would_go(tmp_path):
    root = _plain_task(tmp_path / "iris")
    checked = runner.invoke(app, ["tasks", "check", str(root), "--json"])
    assert checked.exit_code == 0, checked.output
    assert "private/answers.csv beside a public/ folder" in json.loads(checked.output)["answers"]
