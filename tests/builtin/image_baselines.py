"""The first things a user would try on an image task, scored on its held-back test answers.

``python -m tests.builtin.image_baselines TASK_DIR ANSWERS.csv [SUBMISSION.csv]`` prints the test
accuracy of raw pixels + logistic regression and of a histogram gradient booster on pixels (both
fitted on every train image, read at the size of the images), and of the given submission.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

BLOCKS = Path(__file__).resolve().parents[2] / "engine" / "agents" / "builtin" / "script_blocks"


def _reader() -> dict:
    """The agent's own image reader (``image_read.py``), so both sides see the same pixels."""
    names: dict = {"np": np}
    exec((BLOCKS / "image_read.py").read_text().split("# --- script ---\n")[1], names)
    return names


def pixel_matrix(folder: Path, ids: pd.Series) -> np.ndarray:
    read = _reader()
    paths = [folder / f"{i}.png" for i in ids]
    first = read["load_pixels"](paths[0])
    return read["read_images"](paths, first.shape[0]).reshape(len(paths), -1)


def baseline_scores(task: Path, answers: pd.DataFrame) -> Iterator[tuple[str, float]]:
    """(baseline, test accuracy), each as soon as it is fitted."""
    train = pd.read_csv(task / "train.csv")
    x_train, x_test = pixel_matrix(task / "train", train["id"]), pixel_matrix(task / "test", answers["id"])
    models = {
        "pixels + logistic regression": make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)),
        "pixels + histogram gradient booster": HistGradientBoostingClassifier(random_state=0),
    }
    truth = answers["label"].astype(str).to_numpy()
    for name, model in models.items():
        yield name, float((model.fit(x_train, train["label"].astype(str)).predict(x_test) == truth).mean())


def submission_score(submission: Path, answers: pd.DataFrame) -> float:
    sub = pd.read_csv(submission).set_index("id").loc[answers["id"]]
    return float((sub["label"].astype(str).to_numpy() == answers["label"].astype(str).to_numpy()).mean())


def main(argv: list[str]) -> None:
    task, answers = Path(argv[0]), pd.read_csv(argv[1])
    if len(argv) > 2:
        print(f"builtin agent submission: {submission_score(Path(argv[2]), answers):.4f}", flush=True)
    for name, score in baseline_scores(task, answers):
        print(f"{name}: {score:.4f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
