"""`engine tasks init` infers only from what is there: an empty folder is refused (nothing to infer
from, exit 2, no task.yaml), and a metric it cannot infer is never guessed from targets it could
not read, nor blamed on a description.md that does not exist."""

from __future__ import annotations

from typer.testing import CliRunner

from engine.cli.main import app
from tests.tasks import folders

runner = CliRunner()


def test_init_refuses_an_empty_folder_and_writes_nothing(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = runner.invoke(app, ["tasks", "init", str(empty)], env={"COLUMNS": "400"})
    assert result.exit_code == 2, result.output
    assert "holds no data files" in result.output and "nothing to infer" in result.output
    assert not (empty / "task.yaml").exists() and "Traceback" not in result.output


def test_a_description_alone_is_no_data_either(tmp_path):
    root = tmp_path / "words"
    root.mkdir()
    folders.description(root)
    result = runner.invoke(app, ["tasks", "init", str(root)], env={"COLUMNS": "400"})
    assert result.exit_code == 2 and "holds no data files" in result.output, result.output


def test_no_description_and_unreadable_train_get_no_made_up_metric(tmp_path):
    root = folders.regression(tmp_path / "t")
    (root / "description.md").unlink()
    (root / "train.csv").write_bytes(bytes(range(128, 256)))
    result = runner.invoke(app, ["tasks", "init", str(root)], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    metric_line = next(line for line in (root / "task.yaml").read_text().splitlines()
                       if "evaluation_metric" in line)
    assert metric_line.startswith('# evaluation_metric: "<name>"  # NOT inferred: there is no description.md')
    assert "rmse" not in metric_line.split("(known:")[0] and "only a guess" not in metric_line
