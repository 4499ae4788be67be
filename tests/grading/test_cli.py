"""The CLI pieces through typer's CliRunner, mounted the way engine/cli/main.py mounts them."""

from __future__ import annotations

import json
import sys
import types

import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

from engine.cli.tasks import grade_cmd, tasks_app
from engine.tasks import load_task

runner = CliRunner()


@pytest.fixture(scope="module")
def app():
    app = typer.Typer()
    app.add_typer(tasks_app, name="tasks")
    app.command("grade")(grade_cmd)
    return app


def test_tasks_list_json_parses(app):
    result = runner.invoke(app, ["tasks", "list", "--json"])
    assert result.exit_code == 0
    names = {entry["name"]: entry for entry in json.loads(result.stdout)}
    assert {"breast-cancer", "wine", "diabetes", "penguins"} <= set(names)
    assert names["diabetes"]["metric"] == "rmse" and names["wine"]["rows"] == 178


def test_tasks_list_table(app):
    result = runner.invoke(app, ["tasks", "list"])
    assert result.exit_code == 0 and "penguins" in result.stdout


def test_tasks_prepare_creates_the_layout(app, tmp_path):
    result = runner.invoke(app, ["tasks", "prepare", "iris", str(tmp_path / "iris")])
    assert result.exit_code == 0, result.output
    for rel in ("public/train.csv", "public/test.csv", "public/sample_submission.csv",
                "public/description.md", "private/answers.csv", "task.json"):
        assert (tmp_path / "iris" / "prepared" / rel).is_file()


def test_tasks_prepare_unknown_name(app, tmp_path):
    result = runner.invoke(app, ["tasks", "prepare", "mnist", str(tmp_path)])
    assert result.exit_code == 2
    assert "unknown bundled task 'mnist'" in result.stderr and "Traceback" not in result.output


def test_grade_valid_submission_json_and_report_file(app, prepared, tmp_path):
    task = load_task(prepared["wine"])
    out = tmp_path / "reports" / "report.json"
    result = runner.invoke(app, ["grade", "--task", str(prepared["wine"]), "--submission",
                                 str(task.answers), "--json", "-o", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["valid_submission"] and report["score"] == 1.0 and report["gold_medal"]
    assert json.loads(out.read_text())["score"] == 1.0


def test_grade_table_output(app, prepared):
    task = load_task(prepared["diabetes"])
    result = runner.invoke(app, ["grade", "--task", str(prepared["diabetes"]),
                                 "--submission", str(task.sample_submission)])
    assert result.exit_code == 0, result.output
    assert "rmse" in result.stdout and "lower is better" in result.stdout


def test_grade_by_bundled_name_prepares_into_tasks_dir(app, prepared, tmp_path):
    sample = prepared["penguins"] / "prepared/public/sample_submission.csv"
    result = runner.invoke(app, ["grade", "--task", "penguins", "--submission", str(sample),
                                 "--tasks-dir", str(tmp_path / "cache"), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["competition_id"] == "penguins"
    assert (tmp_path / "cache" / "penguins" / "prepared" / "task.json").is_file()


def test_grade_invalid_submission_exits_1(app, prepared, tmp_path):
    bad = tmp_path / "bad.csv"
    pd.DataFrame({"id": [0, 1], "cultivar": [0, 1]}).to_csv(bad, index=False)
    result = runner.invoke(app, ["grade", "--task", str(prepared["wine"]),
                                 "--submission", str(bad), "--json"])
    assert result.exit_code == 1
    assert "expected" in json.loads(result.stdout)["reason"]
    missing = runner.invoke(app, ["grade", "--task", str(prepared["wine"]),
                                  "--submission", str(tmp_path / "nope.csv")])
    assert missing.exit_code == 1 and "submission file not found" in missing.stdout


@pytest.mark.parametrize("args,message", [
    (["--submission", "x.csv"], "missing --task"),
    (["--task", "wine"], "missing --submission"),
    (["--task", "/no/such/dir", "--submission", "x.csv"], "neither a bundled task"),
    (["run-1", "--task", "wine"], "either RUN_ID or --task"),
])
def test_grade_usage_errors_exit_2(app, args, message):
    result = runner.invoke(app, ["grade", *args])
    assert result.exit_code == 2
    assert message in result.stderr and "Traceback" not in result.output


def test_grade_run_id_uses_locate_run_submission(app, monkeypatch, prepared):
    task = load_task(prepared["wine"])
    calls = []

    def locate(run_id, db):
        calls.append((run_id, db))
        return task, task.answers

    fake = types.ModuleType("engine.run.lifecycle")
    fake.locate_run_submission = locate
    monkeypatch.setitem(sys.modules, "engine.run.lifecycle", fake)
    result = runner.invoke(app, ["grade", "run-7", "--db", "x.db", "--json"])
    assert result.exit_code == 0, result.output
    assert calls[0][0] == "run-7" and str(calls[0][1]) == "x.db"
    assert json.loads(result.stdout)["score"] == 1.0
