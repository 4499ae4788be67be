"""load_task: both layouts, inference, and clear errors for missing or contradictory metadata."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from engine.tasks import TaskError, load_task, write_task_json
from tests.tasks.helpers import write_split_task

ANSWERS = pd.DataFrame({"id": [1, 2, 3, 4], "y": [0.5, 1.5, 2.0, 3.0]})
SAMPLE = pd.DataFrame({"id": [1, 2, 3, 4], "y": [0.0] * 4})


def _plain(root: Path, meta: dict | None, description: str = "# Toy\n\nPredict y.\n",
           sample: bool = True) -> Path:
    root.mkdir(parents=True)
    (root / "description.md").write_text(description)
    pd.DataFrame({"id": [1, 2], "x": [1, 2], "y": [2, 4]}).to_csv(root / "train.csv", index=False)
    if sample:
        SAMPLE.to_csv(root / "sample_submission.csv", index=False)
    if meta is not None:
        (root / "task.yaml").write_text(yaml.safe_dump(meta))
    return root


# --- layouts ------------------------------------------------------------------------------


def test_mle_bench_competition_dir_and_its_prepared_dir_load_the_same(prepared):
    comp = load_task(prepared["wine"])
    inner = load_task(prepared["wine"] / "prepared")
    assert comp.description == inner.description
    assert comp.public_dir == inner.public_dir == prepared["wine"] / "prepared" / "public"
    assert comp.private_dir == prepared["wine"] / "prepared" / "private"
    assert comp.answers == comp.private_dir / "answers.csv"
    assert comp.competition_id == inner.competition_id == "wine"
    assert (comp.id_column, comp.target_columns) == ("id", ("cultivar",))
    assert comp.leaderboard.gold is not None and comp.bundled == "wine"


def test_public_private_layout_without_task_json_infers_from_sample(tmp_path):
    root = write_split_task(tmp_path / "my-comp", ANSWERS, SAMPLE, meta={"evaluation_metric": "MAE"})
    task = load_task(root)
    assert task.competition_id == "my-comp"
    assert task.metric == "mae" and task.direction.value == "minimize"
    assert task.description.task_type.value == "regression"
    assert task.description.data_modality.value == "tabular"
    assert task.private_dir == root / "private" and task.answers == root / "private/answers.csv"
    assert (task.id_column, task.target_columns) == ("id", ("y",))
    assert task.leaderboard.gold is None


def test_prepared_dir_inside_a_competition_dir_takes_the_competition_name(tmp_path):
    root = write_split_task(tmp_path / "spaceship" / "prepared", ANSWERS, SAMPLE,
                            meta={"evaluation_metric": "rmse"})
    assert load_task(root).competition_id == "spaceship"
    assert load_task(tmp_path / "spaceship").competition_id == "spaceship"


def test_plain_directory_with_task_yaml(tmp_path):
    root = _plain(tmp_path / "toy", {"evaluation_metric": "rmse", "target_column": "y"},
                  sample=False)
    (root / "sample_submission.csv").unlink(missing_ok=True)
    meta = yaml.safe_load((root / "task.yaml").read_text()) | {"id_column": "id"}
    (root / "task.yaml").write_text(yaml.safe_dump(meta))
    task = load_task(root)
    assert task.public_dir == root and task.private_dir is None and task.answers is None
    assert task.competition_id == "toy"
    assert task.direction.value == "minimize"
    assert task.target_columns == ("y",) and task.sample_submission is None
    assert task.train_file == root / "train.csv"


@pytest.mark.parametrize("metric,direction", [
    ("auc", "maximize"), ("ROC AUC", "maximize"), ("accuracy", "maximize"), ("f1", "maximize"),
    ("logloss", "minimize"), ("log_loss", "minimize"), ("RMSE", "minimize"), ("mae", "minimize"),
])
def test_direction_is_inferred_from_known_metric_names(tmp_path, metric, direction):
    assert load_task(_plain(tmp_path / "t", {"evaluation_metric": metric})).direction.value == direction


def test_metric_is_inferred_from_an_unambiguous_evaluation_section(tmp_path):
    text = ("# Comp\n\nPredict y.\n\n## Evaluation\n\nScored on root mean squared error.\n\n"
            "## Data\n\nAccuracy matters.\n")
    task = load_task(_plain(tmp_path / "t", None, description=text))
    assert task.metric == "rmse"


def test_yaml_overrides_generated_json(prepared, tmp_path):
    copy = shutil.copytree(prepared["wine"], tmp_path / "wine")
    (copy / "task.yaml").write_text("competition_id: wine-renamed\n")
    task = load_task(copy)
    assert task.competition_id == "wine-renamed" and task.metric == "accuracy"


def test_kaggle_leaderboard_csv_gives_medal_ranks(tmp_path):
    root = write_split_task(tmp_path / "c", ANSWERS, SAMPLE, meta={"evaluation_metric": "rmse"})
    pd.DataFrame({"score": [float(s) for s in range(1, 51)]}).to_csv(root / "leaderboard.csv")
    board = load_task(root).leaderboard
    # 50 teams: gold top 10 % (5th best), silver top 20 % (10th), bronze top 40 % (20th).
    assert (board.gold, board.silver, board.bronze, board.median) == (5.0, 10.0, 20.0, 25.5)


def test_image_files_make_an_image_task(tmp_path):
    root = _plain(tmp_path / "img", {"evaluation_metric": "accuracy"})
    (root / "train").mkdir()
    (root / "train" / "0001.png").write_bytes(b"\x89PNG")
    assert load_task(root).description.data_modality.value == "image"


# --- errors -------------------------------------------------------------------------------


def _error(root: Path) -> str:
    with pytest.raises(TaskError) as err:
        load_task(root)
    return str(err.value)


def test_missing_metric_names_the_field_and_the_fix(tmp_path):
    message = _error(_plain(tmp_path / "t", {"target_column": "y"}))
    assert "evaluation_metric is missing: description.md has no Evaluation section" in message
    assert f"add to {tmp_path / 't' / 'task.yaml'} `evaluation_metric: <name>`" in message
    assert "evaluation_metric: rmse" not in message  # never a guess: the task may be a classification


def test_a_fix_never_names_a_task_yaml_that_does_not_exist(tmp_path):
    message = _error(_plain(tmp_path / "t", None))
    assert f"create {tmp_path / 't' / 'task.yaml'} (`engine tasks init" in message


def test_ambiguous_evaluation_section_is_not_guessed(tmp_path):
    text = "# C\n\n## Evaluation\n\nWe report accuracy and log loss.\n"
    assert "evaluation_metric is missing" in _error(_plain(tmp_path / "t", None, description=text))


def test_metric_contradicting_direction(tmp_path):
    message = _error(_plain(tmp_path / "t", {"evaluation_metric": "rmse", "metric_direction": "maximize"}))
    assert "contradictory metadata: evaluation_metric rmse is lower-is-better" in message
    assert "metric_direction is maximize" in message


def test_metric_contradicting_task_type(tmp_path):
    message = _error(_plain(tmp_path / "t", {"evaluation_metric": "accuracy", "task_type": "regression"}))
    assert "task_type regression does not fit evaluation_metric accuracy" in message


def test_unknown_metric_needs_a_direction(tmp_path):
    message = _error(_plain(tmp_path / "t", {"evaluation_metric": "house_score"}))
    assert "not a known metric, so metric_direction is required" in message
    ok = _plain(tmp_path / "u", {"evaluation_metric": "house_score",
                                 "metric_direction": "maximize", "task_type": "classification"})
    assert load_task(ok).metric == "house_score"


def test_typo_in_a_field_name_is_reported(tmp_path):
    message = _error(_plain(tmp_path / "t", {"evaluation_metrc": "rmse"}))
    assert "unknown field `evaluation_metrc`" in message and "evaluation_metric" in message


def test_bad_field_value_is_reported(tmp_path):
    message = _error(_plain(tmp_path / "t", {"evaluation_metric": "rmse", "metric_direction": "up"}))
    assert "`metric_direction`" in message


def test_target_column_not_in_sample_submission(tmp_path):
    message = _error(_plain(tmp_path / "t", {"evaluation_metric": "rmse", "target_column": "z"}))
    assert "target column(s) ['z'] are not columns of sample_submission.csv" in message


def test_target_column_contradicting_target_columns(tmp_path):
    meta = {"evaluation_metric": "rmse", "target_column": "y", "target_columns": ["a", "b"]}
    assert "contradicts target_columns" in _error(_plain(tmp_path / "t", meta))


def test_no_sample_and_no_target_column(tmp_path):
    meta = {"evaluation_metric": "rmse", "id_column": "id"}
    message = _error(_plain(tmp_path / "t", meta, sample=False))
    assert "target_columns is missing and there is no sample submission to read them from" in message
    assert "`target_columns: [<column to predict>]`" in message


def test_missing_description(tmp_path):
    root = _plain(tmp_path / "t", {"evaluation_metric": "rmse"})
    (root / "description.md").unlink()
    assert "description.md is missing" in _error(root)


def test_missing_directory(tmp_path):
    assert "does not exist" in _error(tmp_path / "nope")


def test_answers_inside_public_are_refused(tmp_path):
    root = _plain(tmp_path / "t", {"evaluation_metric": "rmse", "answers": "train.csv"})
    assert "every file of a plain task folder is copied to the scripts' ./input" in _error(root)


def test_answers_in_private_of_a_plain_folder_get_the_split_layout_as_fix(tmp_path):
    root = _plain(tmp_path / "t", {"evaluation_metric": "rmse", "answers": "private/answers.csv"})
    (root / "private").mkdir()
    ANSWERS.to_csv(root / "private" / "answers.csv", index=False)
    message = _error(root)
    assert "lies inside the public data directory" not in message
    assert f"into {root / 'public'} and keep the answers in {root / 'private'}" in message


def test_answers_inside_public_of_a_split_task_name_the_private_dir(tmp_path):
    root = write_split_task(tmp_path / "c", ANSWERS, SAMPLE,
                            meta={"evaluation_metric": "rmse", "answers": "public/test.csv"})
    message = _error(root)
    assert "lies inside the public data directory" in message and f"move it to {root / 'private'}" in message


def test_unreadable_yaml(tmp_path):
    root = _plain(tmp_path / "t", None)
    (root / "task.yaml").write_text("evaluation_metric: [unclosed\n")
    assert "cannot be read as metadata" in _error(root)


def test_write_task_json_lets_a_later_load_skip_task_yaml(tmp_path):
    root = write_split_task(tmp_path / "comp" / "prepared", ANSWERS, SAMPLE,
                            meta={"evaluation_metric": "rmse"})
    first = load_task(tmp_path / "comp")
    path = write_task_json(first)
    assert path == root / "task.json"
    (root / "task.yaml").unlink()
    assert load_task(tmp_path / "comp") == first


def test_empty_sample_submission(tmp_path):
    root = _plain(tmp_path / "t", {"evaluation_metric": "rmse"})
    (root / "sample_submission.csv").write_text("")
    assert "cannot read the sample submission's header" in _error(root)
