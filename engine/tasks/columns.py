"""What a task's columns are: the one set of rules ``engine tasks init`` and ``check`` share.

A column is the id, a target, or a feature; a feature's modality is numeric, categorical, text
(free prose) or image (it names image files, or its ids name files in an image folder). A
target's type is what the submission must hold for it: a class label, a number, or a 0/1 label
of a multi-label task.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".gif", ".tif", ".tiff", ".webp")

# Free text: long on average, and mostly distinct. Short repeated strings are categories.
_TEXT_MEAN_CHARS = 30
_TEXT_DISTINCT_SHARE = 0.5
# A numeric target with this few distinct values (or integers only and few) is a class label.
_MAX_CLASSES = 20


@dataclass(frozen=True)
class Column:
    name: str
    modality: str  # id | numeric | categorical | text | image
    role: str  # id | target | feature


@dataclass(frozen=True)
class Target:
    name: str
    kind: str  # class label | number | 0/1 label | class probability
    classes: tuple[str, ...] = ()  # for a class label: the classes seen in train (a few)


def modality(series: pd.Series) -> str:
    """numeric, categorical, text or image, from the values alone."""
    values = series.dropna()
    if values.empty:
        return "numeric"
    if pd.api.types.is_numeric_dtype(values):
        return "numeric"
    text = values.astype(str)
    if text.str.lower().str.endswith(IMAGE_SUFFIXES).mean() > 0.9:
        return "image"
    long_enough = text.str.len().mean() >= _TEXT_MEAN_CHARS
    distinct = text.nunique() / len(text) >= _TEXT_DISTINCT_SHARE
    return "text" if long_enough and distinct else "categorical"


def target_kind(series: pd.Series) -> Target:
    """What a submission holds for this train column."""
    values = series.dropna()
    name = str(series.name)
    if pd.api.types.is_numeric_dtype(values):
        distinct = sorted(values.unique().tolist())
        if set(distinct) <= {0, 1}:
            return Target(name, "0/1 label", ("0", "1"))
        integral = bool((values == values.round()).all())
        if integral and len(distinct) <= _MAX_CLASSES:
            return Target(name, "class label", tuple(_fmt(v) for v in distinct))
        return Target(name, "number")
    classes = sorted(values.astype(str).unique().tolist())
    return Target(name, "class label", tuple(classes[:_MAX_CLASSES]))


def _fmt(value: object) -> str:
    number = float(value)  # type: ignore[arg-type]
    return str(int(number)) if number.is_integer() else str(value)


def image_folders(public: Path) -> list[Path]:
    """Folders directly under public/ (or one level down) that hold image files."""
    found = []
    for folder in sorted(p for p in public.rglob("*") if p.is_dir()):
        if len(folder.relative_to(public).parts) > 2:
            continue
        if any(f.suffix.lower() in IMAGE_SUFFIXES for f in folder.iterdir() if f.is_file()):
            found.append(folder)
    return found


def ids_name_images(ids: pd.Series, folders: list[Path]) -> Path | None:
    """The image folder whose file stems are most of these ids, if any."""
    wanted = {str(v) for v in ids.dropna().head(200)}
    if not wanted:
        return None
    for folder in folders:
        stems = {f.stem for f in folder.iterdir() if f.suffix.lower() in IMAGE_SUFFIXES}
        if len(wanted & stems) >= 0.5 * len(wanted):  # most ids: the rest are missing images
            return folder
    return None
