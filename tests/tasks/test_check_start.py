"""`engine start` runs `engine tasks check` first: a refused task gets exit 2 and every problem,
before the database, the run or the agent exists; `engine tasks init` writes what check confirms."""

from __future__ import annotations

import shutil
import string
from pathlib import Path

import pandas as pd
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from engine.cli.main import app
from engine.tasks import load_task
from engine.tasks.check import check_task
from tests.tasks import folders

runner = CliRunner()


class Tripwire:
    """A backend (``--agent tests.tasks.test_check_start:Tripwire``) that counts its creation."""

    made: list[str] = []

    def __init__(self, *args: object, **kwargs: object) -> None:
        Tripwire.made.append("made")
        raise RuntimeError("the tripwire backend was created: a refused task reached the agent")


def _start(task: Path, db: Path):
    Tripwire.made.clear()
    return runner.invoke(app, ["start", "--task", str(task), "--agent", "tests.tasks.test_check_start:Tripwire",
                               "--preset", "quick", "--db", str(db)], env={"COLUMNS": "200"})


def test_start_refuses_a_task_check_refuses_before_anything_exists(tmp_path):
    task = folders.regression(tmp_path / "wine")
    (task / "train.csv").write_bytes(bytes(range(128, 256)) * 4)
    result = _start(task, tmp_path / "runs" / "engine.db")
    assert result.exit_code == 2, result.output
    assert "cannot produce a valid submission, so no run was started" in result.output
    assert "train.csv: is not UTF-8 text: byte 0 (line 1)" in result.output
    assert not (tmp_path / "runs").exists() and Tripwire.made == []
    assert "Traceback" not in result.output


def test_a_task_check_accepts_does_reach_the_agent(tmp_path):
    """The tripwire can fire: what the check lets through goes on to build the backend."""
    task = folders.regression(tmp_path / "fine")
    _start(task, tmp_path / "engine.db")
    assert Tripwire.made == ["made"]


def test_init_writes_a_commented_task_yaml_that_check_accepts(tmp_path):
    task = folders.classes(tmp_path / "wine", {"quality": [3, 4, 5, 6], "sweetness": [0, 1, 2]}, "a secret")
    (task / "description.md").write_text("# Wine\n\n## Evaluation\n\nQuadratic Weighted Kappa.\n")
    result = runner.invoke(app, ["tasks", "init", str(task)])
    assert result.exit_code == 0, result.output
    text = (task / "task.yaml").read_text()
    assert 'evaluation_metric: "quadratic_weighted_kappa"  # named in description.md' in text
    assert 'target_columns: ["quality", "sweetness"]  # the other columns of sample_submission.csv' in text
    assert 'id_column: "id"  # the first column of sample_submission.csv' in text
    assert all("#" in line for line in text.splitlines()), "every line says where it came from"
    assert yaml.safe_load(text)["target_columns"] == ["quality", "sweetness"]
    assert not check_task(task).refused
    again = runner.invoke(app, ["tasks", "init", str(task)])
    assert again.exit_code == 2 and "exists already" in again.output


def test_init_without_a_named_metric_leaves_it_for_the_user(tmp_path):
    task = folders.classes(tmp_path / "t", {"colour": ["red", "white"]}, "a secret formula")
    runner.invoke(app, ["tasks", "init", str(task)])
    text = (task / "task.yaml").read_text()
    assert '# evaluation_metric: "accuracy"  # NOT inferred' in text
    result = check_task(task)
    assert result.refused and "evaluation_metric is missing" in result.problems[0].what


def test_init_names_text_and_image_modalities(tmp_path):
    text_task = folders.classes(tmp_path / "reviews", {"label": ["pos", "neg"]}, "accuracy", text=True)
    image_task = folders.images(tmp_path / "pets", by_id=True)
    for task, modality in ((text_task, "text"), (image_task, "image")):
        runner.invoke(app, ["tasks", "init", str(task)])
        assert yaml.safe_load((task / "task.yaml").read_text())["data_modality"] == modality


# --- any folder: a refused one never reaches an agent, nothing prints a traceback ---------------

_names = st.text(string.ascii_lowercase, min_size=1, max_size=6)


@st.composite
def task_folders(draw: st.DrawFn) -> dict:
    columns = draw(st.lists(_names, min_size=1, max_size=4, unique=True).filter(lambda c: "id" not in c))
    return {
        "columns": columns,
        "target": draw(st.sampled_from(columns)),
        "rows": draw(st.integers(2, 12)),
        "text_values": draw(st.booleans()),
        "encoding": {f: draw(st.sampled_from(["utf-8", "latin-1", "bytes"]))
                     for f in ("train.csv", "test.csv", "sample_submission.csv")},
        "missing": draw(st.sets(st.sampled_from(["train.csv", "test.csv", "sample_submission.csv",
                                                 "description.md"]))),
        "id_shift": draw(st.sampled_from([0, 0, 1, 1000])),
        "metric": draw(st.sampled_from([None, "rmse", "accuracy", "qwk", "map@3", "house_score"])),
    }


def _build(root: Path, spec: dict) -> None:
    root.mkdir(parents=True)
    n, target = spec["rows"], spec["target"]
    features = {c: ([f"é{c}{i}" for i in range(n)] if spec["text_values"] else list(range(n)))
                for c in spec["columns"] if c != target}
    train = pd.DataFrame({"id": range(n), **features, target: [i % 3 for i in range(n)]})
    test = pd.DataFrame({"id": range(n, 2 * n), **features})
    sample = pd.DataFrame({"id": range(n + spec["id_shift"], 2 * n + spec["id_shift"]), target: 0})
    for name, frame in (("train.csv", train), ("test.csv", test), ("sample_submission.csv", sample)):
        encoding = spec["encoding"][name]
        data = frame.to_csv(index=False)
        (root / name).write_bytes(bytes(range(128, 256)) if encoding == "bytes" else data.encode(encoding))
    folders.description(root, "a house formula")
    if spec["metric"]:
        fields = {"evaluation_metric": spec["metric"]}
        if spec["metric"] == "house_score":
            fields |= {"metric_direction": "maximize", "task_type": "regression"}
        folders.meta(root, **fields)
    for name in spec["missing"]:
        (root / name).unlink()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(spec=task_folders())
def test_a_refused_folder_never_reaches_an_agent_and_nothing_prints_a_traceback(tmp_path, spec):
    root = tmp_path / "case"
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(tmp_path / "runs", ignore_errors=True)
    _build(root, spec)
    checked = runner.invoke(app, ["tasks", "check", str(root)])
    assert "Traceback" not in checked.output and checked.exit_code in (0, 2), checked.output
    assert checked.exception is None or isinstance(checked.exception, SystemExit), checked.exception
    refused = check_task(root).refused
    assert (checked.exit_code == 2) == refused
    if spec["id_shift"] and not refused:
        raise AssertionError(f"ids shifted by {spec['id_shift']} yet accepted: {checked.output}")
    if not refused:
        load_task(root)  # what check accepts, the loader loads
    if refused:
        started = _start(root, tmp_path / "runs" / "engine.db")
        assert started.exit_code == 2 and Tripwire.made == [], started.output
        assert not (tmp_path / "runs").exists() and "Traceback" not in started.output


def test_check_json_lists_what_was_understood_and_every_problem(tmp_path):
    import json

    good = folders.regression(tmp_path / "good", ("formation_energy", "bandgap"))
    result = runner.invoke(app, ["tasks", "check", str(good), "--json"])
    report = json.loads(result.stdout)
    assert result.exit_code == 0 and report["refused"] is False and report["metric"] == "mcrmse"
    assert [t["name"] for t in report["targets"]] == ["formation_energy", "bandgap"]
    bad = folders.regression(tmp_path / "bad")
    (bad / "test.csv").write_bytes(b"\xff\xfe")
    (bad / "description.md").unlink()
    result = runner.invoke(app, ["tasks", "check", str(bad), "--json"])
    problems = json.loads(result.stdout)["problems"]
    assert result.exit_code == 2 and len(problems) == 2
    assert {Path(p["file"]).name for p in problems} == {"test.csv", "description.md"}
