"""Four task folders of several-target and ranked submissions, from data scikit-learn ships.

Each is a split layout (``public/`` with the CSVs and description.md, ``private/answers.csv``)
that ``engine tasks init`` reads; the description names the metric as a Kaggle page would:

- ``diabetes_two_targets``: disease progression and the serum measure ``s5`` (real columns of
  scikit-learn's diabetes data) from the other nine, graded by MCRMSE;
- ``wine_labels``: three 0/1 labels of scikit-learn's wine table (cultivar 0, alcohol and
  colour intensity above their medians), one probability per label, column-wise ROC AUC;
- ``diabetes_rating``: disease progression as an ordinal rating 1-5 (its quintiles), QWK;
- ``digits_map3``: the handwritten digit (0-5) of an 8x8 image, the three likeliest digits, MAP@3;
  six classes are enough for three distinct guesses best first, and each booster fits one tree a
  class per round, so four more classes would add two thirds to every fit and nothing to the shape.

Rows are few (a few hundred) so a quick builtin run finishes in well under a minute.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn import datasets

_DESCRIPTION = "# {title}\n\nPredict {what}.\n\n## Evaluation\n\nSubmissions are scored with {metric}.\n"


def _write(root: Path, table: pd.DataFrame, targets: list[str], *, metric: str, what: str,
           sample_value: object, test_share: float = 0.3) -> Path:
    """train/test/sample_submission in ``public/``, the test rows' targets in ``private/``."""
    public, private = root / "public", root / "private"
    public.mkdir(parents=True, exist_ok=True)
    private.mkdir(parents=True, exist_ok=True)
    table = table.sample(frac=1.0, random_state=0).reset_index(drop=True)
    table.insert(0, "id", np.arange(1, len(table) + 1))
    cut = int(len(table) * (1 - test_share))
    train, test = table[:cut], table[cut:]
    train.to_csv(public / "train.csv", index=False)
    test.drop(columns=targets).to_csv(public / "test.csv", index=False)
    sample = pd.DataFrame({"id": test["id"]})
    for target in targets:
        sample[target] = sample_value
    sample.to_csv(public / "sample_submission.csv", index=False)
    test[["id", *targets]].to_csv(private / "answers.csv", index=False)
    (public / "description.md").write_text(_DESCRIPTION.format(title=root.name, what=what, metric=metric))
    return root


def diabetes_two_targets(root: Path) -> Path:
    frame = datasets.load_diabetes(as_frame=True, scaled=False).frame.rename(columns={"target": "progression"})
    return _write(root, frame.head(300), ["progression", "s5"], metric="MCRMSE (mean columnwise root mean squared error)",
                  what="the disease progression after one year and the serum measure s5", sample_value=0.0)


def wine_labels(root: Path) -> Path:
    wine = datasets.load_wine(as_frame=True)
    frame = wine.data.copy()
    labels = pd.DataFrame({
        "cultivar_0": (wine.target == 0).astype(int),
        "strong": (frame["alcohol"] > frame["alcohol"].median()).astype(int),
        "deep_colour": (frame["color_intensity"] > frame["color_intensity"].median()).astype(int),
    })
    frame = frame.drop(columns=["alcohol", "color_intensity"])
    return _write(root, pd.concat([frame, labels], axis=1), list(labels.columns),
                  metric="the mean column-wise ROC AUC", what="three labels of each wine", sample_value=0.5)


def diabetes_rating(root: Path) -> Path:
    frame = datasets.load_diabetes(as_frame=True, scaled=False).frame
    frame["rating"] = pd.qcut(frame.pop("target"), 5, labels=False).astype(int) + 1
    return _write(root, frame.head(300), ["rating"], metric="the quadratic weighted kappa",
                  what="the rating (1-5) of the disease's progression", sample_value=3)


def digits_map3(root: Path) -> Path:
    digits = datasets.load_digits(as_frame=True)
    frame = digits.data.copy()
    frame["digit"] = digits.target
    frame = frame[frame["digit"] < 6]
    return _write(root, frame.head(400), ["digit"], metric="MAP@3 (mean average precision at 3)",
                  what="the digit each image shows (up to three guesses, best first)", sample_value="0 1 2")


TASKS: dict[str, Callable[[Path], Path]] = {
    "diabetes_two_targets": diabetes_two_targets,
    "wine_labels": wine_labels,
    "diabetes_rating": diabetes_rating,
    "digits_map3": digits_map3,
}
