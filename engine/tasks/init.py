"""``engine tasks init DIR``: a task.yaml inferred from a Kaggle-style folder, for the user to confirm.

Every inferred line carries a comment saying where it came from; a field that cannot be inferred
is written commented out with a suggestion, so ``engine tasks check`` names it until it is set.
The column rules are ``engine/tasks/columns.py``'s, shared with ``check``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from engine.tasks import layout as lay
from engine.tasks.check_files import Unreadable, read_csv
from engine.tasks.columns import ids_name_images, image_folders, modality, target_kind
from engine.tasks.loader import metric_from_description
from engine.tasks.metric_registry import known_metrics
from engine.tasks.model import TaskError

_ROWS = 5000  # rows read to infer kinds: enough to tell text from categories


def write_task_yaml(directory: Path | str, *, force: bool = False) -> Path:
    root = Path(directory).expanduser()
    layout = lay.find_layout(root.resolve())
    target = layout.meta_dirs[-1] / lay.META_YAML[0]
    if not lay.holds_data_files(layout.public_dir):
        raise TaskError(f"{layout.public_dir} holds no data files (train.csv, test.csv, sample_submission.csv, "
                        "image folders), so there is nothing to infer a task.yaml from; put the competition's "
                        f"files there first (docs/tasks.md lists them), then run `engine tasks init {root}` again")
    if target.exists() and not force:
        raise TaskError(f"{target} exists already; check it with `engine tasks check {root}`, "
                        "or pass --force to write a new one over it")
    text = infer_task_yaml(layout)
    target.write_text(text, encoding="utf-8")
    return target


def infer_task_yaml(layout: lay.Layout) -> str:
    public = layout.public_dir
    train, test = _frame(public / "train.csv"), _frame(public / "test.csv")
    sample_path = lay.find_sample_submission(public, None)
    sample = _frame(sample_path) if sample_path else None
    lines = [
        f"# task.yaml written by `engine tasks init` from the files in {layout.root}.",
        "# Each inferred line says where it came from: confirm or correct it, then run",
        f"# `engine tasks check {layout.root}`. Every field is described in docs/tasks.md.",
        _line("competition_id", layout.default_id, "the folder's name"),
    ]
    lines += _metric_lines(public, train, sample)
    lines += _column_lines(train, test, sample, sample_path)
    lines.append(_line("data_modality", *_data_modality(public, train, test)))
    if layout.private_dir is not None and lay.find_answers(layout, None) is not None:
        found = lay.find_answers(layout, None)
        assert found is not None
        lines.append(_line("answers", found.name, f"found in {layout.private_dir}; optional"))
    return "\n".join(lines) + "\n"


def _frame(path: Path | None) -> pd.DataFrame | None:
    if path is None or not path.is_file():
        return None
    try:
        return read_csv(path, nrows=_ROWS)
    except Unreadable:
        return None  # `engine tasks check` names it, with the byte at fault


def _line(key: str, value: object, why: str) -> str:
    return f"{key}: {json.dumps(value)}  # {why}"


def _metric_lines(public: Path, train: pd.DataFrame | None, sample: pd.DataFrame | None) -> list[str]:
    description = public / "description.md"
    text = description.read_text(encoding="utf-8", errors="replace") if description.is_file() else ""
    named = metric_from_description(text)
    if named is not None:
        return [_line("evaluation_metric", named, "named in description.md's Evaluation section")]
    why = "description.md names no known metric" if description.is_file() else "there is no description.md"
    guess = _suggest_metric(train, sample)
    hint = f"; {guess} is only a guess from the targets" if guess else ""
    return [f"# evaluation_metric: {json.dumps(guess or '<name>')}  # NOT inferred: {why}. "
            f"Write the one the competition is scored by (known: {known_metrics()}){hint}"]


def _suggest_metric(train: pd.DataFrame | None, sample: pd.DataFrame | None) -> str | None:
    """A guess from the targets' kinds; None when the targets cannot be read (no guess from nothing)."""
    if sample is None or train is None:
        return None
    targets = [c for c in sample.columns[1:] if c in train.columns]
    if not targets:
        return "logloss"  # the sample's columns are classes: one probability per class
    kinds = {target_kind(train[c]).kind for c in targets}
    if kinds == {"0/1 label"}:
        return "mean_columnwise_roc_auc" if len(targets) > 1 else "roc_auc"
    if "number" in kinds:
        return "mcrmse" if len(targets) > 1 else "rmse"
    return "accuracy"


def _column_lines(train: pd.DataFrame | None, test: pd.DataFrame | None, sample: pd.DataFrame | None,
                  sample_path: Path | None) -> list[str]:
    if sample is not None and sample_path is not None:
        id_column, targets = str(sample.columns[0]), [str(c) for c in sample.columns[1:]]
        where = sample_path.name
        kinds = _kinds(train, targets)
        return [_line("id_column", id_column, f"the first column of {where}"),
                _line("target_columns", targets, f"the other columns of {where}{kinds}")]
    if train is not None and test is not None:
        shared = [str(c) for c in test.columns if c in train.columns]
        targets = [str(c) for c in train.columns if c not in test.columns]
        if shared and targets:
            return [_line("id_column", shared[0], "the first column of test.csv (no sample submission)"),
                    _line("target_columns", targets, f"train.csv's columns that test.csv lacks{_kinds(train, targets)}")]
    return ["# id_column: \"id\"  # NOT inferred: no sample_submission.csv, and train/test.csv do not tell",
            "# target_columns: [\"target\"]  # NOT inferred: name the column(s) to predict"]


def _kinds(train: pd.DataFrame | None, targets: list[str]) -> str:
    if train is None:
        return ""
    known = [f"{t}: {target_kind(train[t]).kind}" for t in targets if t in train.columns]
    if known:
        return "; in train.csv " + ", ".join(known)
    return "; not columns of train.csv: one probability per class"


def _data_modality(public: Path, train: pd.DataFrame | None, test: pd.DataFrame | None) -> tuple[str, str]:
    frame = train if train is not None else test
    folders = image_folders(public)
    kinds = {c: modality(frame[c]) for c in frame.columns} if frame is not None else {}
    images = [c for c, k in kinds.items() if k == "image"]
    if frame is not None and not images and folders and ids_name_images(frame.iloc[:, 0], folders):
        images = [str(frame.columns[0])]
    text = [c for c, k in kinds.items() if k == "text"]
    if images and text:
        return "mixed", f"image files ({images[0]}) and free text ({text[0]})"
    if images:
        return "image", f"column {images[0]!r} names image files"
    if text:
        return "text", f"free-text column(s): {', '.join(text)}"
    if folders:
        return "image", f"image files in {folders[0].relative_to(public)}/"
    return "tabular", "no image files, no free-text column"
