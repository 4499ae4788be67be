"""Task folders as users bring them: the good shapes and the bad ones of docs/tasks.md's table.

Each ``Case`` builds one folder in a directory and says what ``engine tasks check`` must answer:
refused or not, and a phrase the report must hold. docs/tasks.md's table lists the same cases by
name (tests/tasks/test_check_cases.py keeps the two in step).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32  # a PNG header: what the check reads of an image
_EVAL = "# {title}\n\nPredict {what}.\n\n## Evaluation\n\nSubmissions are scored with {metric}.\n"


def description(root: Path, metric: str = "the root mean squared error", what: str = "y") -> None:
    (root / "description.md").write_text(_EVAL.format(title=root.name, metric=metric, what=what))


def meta(root: Path, **fields: object) -> None:
    (root / "task.yaml").write_text(yaml.safe_dump(fields))


def regression(root: Path, targets: tuple[str, ...] = ("y",), n: int = 40) -> Path:
    """A plain folder: train/test/sample_submission CSVs and a description naming RMSE."""
    root.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    data = pd.DataFrame({"id": range(1, n + 1), "x1": rng.normal(size=n), "x2": rng.integers(0, 5, n)})
    for t in targets:
        data[t] = data["x1"] * 2 + rng.normal(size=n)
    half = n // 2
    data[:half].to_csv(root / "train.csv", index=False)
    data[half:].drop(columns=list(targets)).to_csv(root / "test.csv", index=False)
    sample = pd.DataFrame({"id": data["id"][half:]})
    for t in targets:
        sample[t] = 0.0
    sample.to_csv(root / "sample_submission.csv", index=False)
    description(root, "the mean columnwise root mean squared error (MCRMSE)" if len(targets) > 1
                else "the root mean squared error")
    return root


def classes(root: Path, targets: dict[str, list[object]], metric: str, n: int = 60,
            text: bool = False) -> Path:
    """Class-label targets (each with its classes) and a description naming ``metric``."""
    root.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(1)
    data = pd.DataFrame({"id": range(100, 100 + n), "x1": rng.normal(size=n)})
    if text:
        data["review"] = [f"a review of item {i}: {'good' if i % 2 else 'poor'} and {i * 7} words long" for i in range(n)]
    for t, labels in targets.items():
        data[t] = rng.choice(np.array(labels, dtype=object), size=n)
    half = n // 2
    data[:half].to_csv(root / "train.csv", index=False)
    data[half:].drop(columns=list(targets)).to_csv(root / "test.csv", index=False)
    sample = pd.DataFrame({"id": data["id"][half:]})
    for t, labels in targets.items():
        sample[t] = labels[0]
    sample.to_csv(root / "sample_submission.csv", index=False)
    description(root, metric)
    return root


def per_class(root: Path) -> Path:
    """A sample submission with one probability column per class of train's ``species``."""
    classes(root, {"species": ["setosa", "versicolor", "virginica"]}, "the multi-class log loss")
    sample = pd.read_csv(root / "sample_submission.csv")[["id"]]
    for c in ("setosa", "versicolor", "virginica"):
        sample[c] = 1 / 3
    sample.to_csv(root / "sample_submission.csv", index=False)
    return root


def multilabel(root: Path) -> Path:
    labels = {name: [0, 1] for name in ("toxic", "severe", "obscene", "threat", "insult", "hate")}
    classes(root, labels, "the mean column-wise ROC AUC", text=True)
    return root


def map3(root: Path) -> Path:
    classes(root, {"place": ["a", "b", "c", "d", "e"]}, "MAP@3 (mean average precision at 3)")
    sample = pd.read_csv(root / "sample_submission.csv")
    sample["place"] = "a b c"
    sample.to_csv(root / "sample_submission.csv", index=False)
    return root


def images(root: Path, *, by_id: bool = False) -> Path:
    """An image task: train.csv/test.csv name image files (or ids name files in train/, test/)."""
    root.mkdir(parents=True, exist_ok=True)
    for split, ids in (("train", range(1, 11)), ("test", range(11, 16))):
        (root / split).mkdir()
        for i in ids:
            (root / split / f"{i}.png").write_bytes(PNG)
        frame = pd.DataFrame({"id": list(ids)})
        if not by_id:
            frame["image"] = [f"{split}/{i}.png" for i in ids]
        if split == "train":
            frame["label"] = ["cat", "dog"] * 5
        frame.to_csv(root / f"{split}.csv", index=False)
    pd.DataFrame({"id": range(11, 16), "label": "cat"}).to_csv(root / "sample_submission.csv", index=False)
    description(root, "accuracy", "the animal")
    return root


@dataclass(frozen=True)
class Case:
    name: str  # as docs/tasks.md's table names it
    build: Callable[[Path], object]
    refused: bool
    says: str  # a phrase `engine tasks check` prints for it


def _edit(base: Callable[[Path], Path], change: Callable[[Path], object]) -> Callable[[Path], object]:
    def build(root: Path) -> None:
        change(base(root))
    return build


def _write(name: str, data: bytes) -> Callable[[Path], None]:
    return lambda root: (root / name).write_bytes(data)


def _unlink(*names: str) -> Callable[[Path], None]:
    return lambda root: [(root / n).unlink() for n in names]


def _sample_ids_from(first: int) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        sample = pd.read_csv(root / "sample_submission.csv")
        sample["id"] = range(first, first + len(sample))
        sample.rename(columns={"id": "Id"}).to_csv(root / "sample_submission.csv", index=False)
        meta(root, id_column="Id")
    return change


def _private_answers(root: Path) -> None:
    (root / "private").mkdir()
    pd.DataFrame({"id": [1], "y": [1.0]}).to_csv(root / "private" / "answers.csv", index=False)


def _rename_sample_column(root: Path) -> None:
    sample = pd.read_csv(root / "sample_submission.csv")
    sample.rename(columns={"y": "prediction"}).to_csv(root / "sample_submission.csv", index=False)


def _undecodable_description(root: Path) -> None:
    (root / "description.md").write_bytes("# Vins\n\nqualité évaluée\n".encode("latin-1"))


def _latin1_test(root: Path) -> None:
    test = pd.read_csv(root / "test.csv")
    test["note"] = "café"
    test.to_csv(root / "test.csv", index=False, encoding="latin-1")


CASES: list[Case] = [
    Case("empty folder", lambda r: r.mkdir(parents=True), True, "holds no data files"),
    Case("description.md only", lambda r: (r.mkdir(parents=True), description(r)), True, "holds no data files"),
    Case("test.csv missing", _edit(regression, _unlink("test.csv")), True, "no test data"),
    Case("train.csv of random bytes", _edit(regression, _write("train.csv", bytes(range(128, 256)) * 8)),
         True, "is not UTF-8 text: byte 0 (line 1)"),
    Case("test.csv in Latin-1", _edit(regression, _latin1_test), True, "(line 2)"),
    Case("ragged CSV", _edit(regression, _write("train.csv", b"id,x1,y\n1,2,3\n4,5,6,7,8\n")), True,
         "is not a well-formed CSV"),
    Case("empty train.csv", _edit(regression, _write("train.csv", b"")), True, "is empty (no header line)"),
    Case("image task without test data", _edit(images, lambda r: (_unlink("test.csv")(r), _rmtree(r / "test"))),
         True, "no test data"),
    Case("sample ids are not the test ids", _edit(regression, _sample_ids_from(5001)), True,
         "the sample submission's ids are not the test ids"),
    Case("submission column is neither a target nor a class", _edit(regression, _rename_sample_column), True,
         "are neither columns of the train data"),
    Case("image named but missing", _edit(images, _unlink("train/3.png")), True, "do not exist"),
    Case("image of an id missing from its folder", _edit(lambda r: images(r, by_id=True), _unlink("test/12.png")),
         True, "have no image in test/"),
    Case("image that is not an image", _edit(images, _write("train/4.png", b"GIF? no: text")), True,
         "is not an image"),
    Case("answers named but not found", _edit(regression, lambda r: meta(r, answers="answers.csv")), True,
         "answers are optional"),
    Case("private/ inside a plain folder", _edit(regression, _private_answers), True,
         "every file of a plain task folder is copied"),
    Case("metric not in the registry",
         _edit(regression, lambda r: meta(r, evaluation_metric="house_score", metric_direction="maximize",
                                          task_type="regression")), True, "is not a metric the engine knows"),
    Case("rmse for text class labels",
         lambda r: (classes(r, {"colour": ["red", "white"]}, "accuracy"), meta(r, evaluation_metric="rmse")),
         True, "rmse needs numbers, but target 'colour' holds class labels"),
    Case("no metric named anywhere", _edit(regression, lambda r: description(r, "a secret formula")), True,
         "evaluation_metric is missing"),
    Case("typo in task.yaml", _edit(regression, lambda r: meta(r, evaluation_metrc="rmse")), True,
         "unknown field `evaluation_metrc`"),
    Case("description.md not UTF-8", _edit(regression, _undecodable_description), True,
         "cannot be read as UTF-8 text"),
    Case("two regression targets", lambda r: regression(r, ("formation_energy", "bandgap")), False, "mcrmse"),
    Case("two ordinal targets graded by QWK",
         lambda r: classes(r, {"quality": [3, 4, 5, 6, 7], "sweetness": [0, 1, 2]}, "quadratic weighted kappa"),
         False, "quadratic_weighted_kappa"),
    Case("multi-label, six 0/1 columns", multilabel, False, "mean_columnwise_roc_auc"),
    Case("per-class probabilities", per_class, False, "probability of class 'setosa'"),
    Case("MAP@3 ranking", map3, False, "map@3"),
    Case("image files named in a column", images, False, "image"),
    Case("image folders referenced by id", lambda r: images(r, by_id=True), False, "names the images in train/"),
    Case("free-text column", lambda r: classes(r, {"label": ["pos", "neg"]}, "macro F1", text=True), False,
         "text"),
    Case("metric spelled as on Kaggle",
         _edit(regression, lambda r: meta(r, evaluation_metric="Root Mean Squared Logarithmic Error")), False,
         "rmsle"),
    Case("label metric on continuous numbers",
         _edit(regression, lambda r: meta(r, evaluation_metric="accuracy")), False,
         "warning"),
]


def _rmtree(path: Path) -> None:
    import shutil

    shutil.rmtree(path)
