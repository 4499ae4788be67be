"""Every task folder of docs/tasks.md's table, through `engine tasks check` as a user runs it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from engine.cli.tasks import tasks_app
from engine.tasks import load_task
from engine.tasks.check import check_task
from tests.tasks.folders import CASES, Case

runner = CliRunner()
DOCS = Path(__file__).resolve().parents[2] / "docs" / "tasks.md"


@pytest.fixture(scope="module")
def app() -> typer.Typer:
    app = typer.Typer()
    app.add_typer(tasks_app, name="tasks")
    return app


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_check_answers_each_case(app, tmp_path, case: Case):
    root = tmp_path / "task"
    case.build(root)
    result = runner.invoke(app, ["tasks", "check", str(root)], env={"COLUMNS": "200"})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    assert result.exit_code == (2 if case.refused else 0), result.output
    assert case.says in _flat(result.output), result.output
    if not case.refused:
        load_task(root)  # what check accepts, the loader loads


def test_every_problem_names_a_file_and_a_fix(tmp_path):
    for case in CASES:
        root = tmp_path / re.sub(r"\W+", "-", case.name)
        case.build(root)
        for problem in check_task(root).problems:
            assert problem.file and problem.fix, (case.name, problem)


def test_an_empty_folder_gets_every_problem_at_once_and_never_id_column(tmp_path):
    (tmp_path / "t").mkdir()
    result = check_task(tmp_path / "t")
    text = " ".join(p.line() for p in result.problems)
    for phrase in ("description.md: is missing", "holds no data files", "no sample_submission.csv"):
        assert phrase in text
    assert "id_column is missing" not in text


def test_the_docs_table_lists_exactly_these_cases():
    rows = re.findall(r"^\| ([^|]+?) \|", DOCS.read_text(encoding="utf-8"), flags=re.MULTILINE)
    names = {c.name for c in CASES}
    assert names <= set(rows), sorted(names - set(rows))
    assert len(CASES) >= 20


def _flat(output: str) -> str:
    """The check's output with rich's table borders and line breaks taken out."""
    return re.sub(r"\s*[│┃]\s*|\s*\n\s*", " ", output)


def test_a_missing_metric_lists_the_known_metrics_once(tmp_path):
    """The refusal names the known metrics in its message; its fix points to the docs' table
    instead of printing the list a second time."""
    case = next(c for c in CASES if c.name == "no metric named anywhere")
    case.build(tmp_path / "t")
    [problem] = [p for p in check_task(tmp_path / "t").problems if p.field == "evaluation_metric"]
    assert problem.line().count("quadratic_weighted_kappa") == 1, problem.line()
    assert "docs/tasks.md" in problem.fix
