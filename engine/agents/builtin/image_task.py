"""Whether a task's rows are images, and where they are: read off its public files.

The Kaggle layouts ``docs/tasks.md`` describes: train.csv with an id and a label and the images
in folders by id (``train/<id>.png``, ``test/<id>.png``), or a column naming each row's image file.
A task that is neither gets no image gene, and its scripts stay what they were.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from engine.tasks.columns import IMAGE_SUFFIXES

TRAIN_FOLDERS = ("train", "train_images", "images")
TEST_FOLDERS = ("test", "test_images", "images")
# Every image is read at this size a side: 32 keeps a 10k-image task's features to seconds on
# one core; the features shrink it further (image_features.py).
IMAGE_SIZE = 32
DEFAULT_IMAGE_FEATURES = ("pixels", "gradients", "colours", "random_convolutions")
_ROWS_LOOKED_AT = 200


def image_gene(task_dir: str | Path) -> dict[str, Any] | None:
    """The DATA gene's ``images`` settings for an image task, or None for any other task."""
    base = Path(task_dir)
    try:
        header, rows = _head(base / "train.csv")
        sample_header, _ = _head(base / "sample_submission.csv")
    except (OSError, UnicodeDecodeError, csv.Error, StopIteration):
        return None
    if not header or not sample_header:
        return None
    column = _image_column(header, rows)
    if column is not None:
        return _gene(column=column, train_dir="", test_dir="")
    id_col = sample_header[0]
    if id_col not in header:
        return None
    ids = {row[header.index(id_col)] for row in rows if len(row) > header.index(id_col)}
    train_dir = next((f for f in TRAIN_FOLDERS if _holds(base / f, ids)), None)
    test_dir = next((f for f in TEST_FOLDERS if _has_images(base / f) and f != train_dir), None)
    if train_dir is None:
        return None
    return _gene(column=None, train_dir=train_dir, test_dir=test_dir or train_dir)


def _gene(*, column: str | None, train_dir: str, test_dir: str) -> dict[str, Any]:
    return {"column": column, "train_dir": train_dir, "test_dir": test_dir, "size": IMAGE_SIZE,
            "features": list(DEFAULT_IMAGE_FEATURES)}


def _head(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        header = [c.strip() for c in next(reader)]
        rows = [row for _, row in zip(range(_ROWS_LOOKED_AT), reader)]
    return header, rows


def _image_column(header: list[str], rows: list[list[str]]) -> str | None:
    for i, name in enumerate(header):
        values = [row[i].strip().lower() for row in rows if len(row) > i and row[i].strip()]
        if values and sum(v.endswith(IMAGE_SUFFIXES) for v in values) > 0.9 * len(values):
            return name
    return None


def _has_images(folder: Path) -> bool:
    return folder.is_dir() and any(p.suffix.lower() in IMAGE_SUFFIXES for p in folder.iterdir())


def _holds(folder: Path, ids: set[str]) -> bool:
    """Whether most of these ids have an image in the folder."""
    if not ids or not folder.is_dir():
        return False
    stems = {p.stem for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES}
    return len(ids & stems) >= 0.5 * len(ids)


def with_images(spec: dict[str, Any], task_dir: str | Path) -> dict[str, Any]:
    """The spec reading the task's images, when it is an image task (else the spec as it was).
    The table features (``features.py``) do not apply to pixels: the gene's list is emptied."""
    images = image_gene(task_dir)
    if images is None:
        return spec
    return {**spec, "data": {**spec["data"], "images": images, "features": []}}


def image_feature_variant(out: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The ablation's feature change on an image task: the random convolutions, the costliest
    features, taken out (or put back)."""
    images = out["data"]["images"]
    if "random_convolutions" in images["features"]:
        images["features"] = [f for f in images["features"] if f != "random_convolutions"]
        return "random convolution image features removed", out
    images["features"] = [f for f in DEFAULT_IMAGE_FEATURES if f in images["features"] or f == "random_convolutions"]
    return "random convolution image features added", out
