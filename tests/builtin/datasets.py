"""Small synthetic tasks in MLE-bench's public layout (train.csv, test.csv, sample_submission.csv).

Generated with a seeded numpy RNG so every test run sees the same data; each has a real signal
so "better than a naive baseline" is a meaningful check.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from events.domain import DataModality, MetricDirection, TaskDescription, TaskType


def _write(dest: Path, train: pd.DataFrame, test: pd.DataFrame, sample: pd.DataFrame) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    train.to_csv(dest / "train.csv", index=False)
    test.to_csv(dest / "test.csv", index=False)
    sample.to_csv(dest / "sample_submission.csv", index=False)
    (dest / "description.md").write_text("Synthetic builtin-agent test task.\n")
    return dest


def binary_task(dest: Path, n: int = 1200) -> Path:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(n, 6))
    logit = 1.4 * x[:, 0] - 1.1 * x[:, 1] + 0.8 * x[:, 2] * x[:, 3] + 0.5 * np.sin(3 * x[:, 4])
    y = (logit + rng.normal(scale=0.8, size=n) > 0).astype(int)
    df = pd.DataFrame(x, columns=[f"f{i}" for i in range(6)])
    df.insert(0, "id", np.arange(n))
    df["target"] = y
    cut = int(n * 0.8)
    train, test = df.iloc[:cut], df.iloc[cut:].drop(columns="target")
    sample = pd.DataFrame({"id": test["id"], "target": 0.5})
    return _write(dest, train, test, sample)


def multiclass_task(dest: Path, n: int = 1200) -> Path:
    """Three classes (string labels), missing values, two categorical columns."""
    rng = np.random.default_rng(2)
    x = rng.normal(size=(n, 4))
    color = rng.choice(["red", "green", "blue"], size=n)
    size = rng.choice(["S", "M", "L", "XL"], size=n)
    score = x[:, 0] + (color == "red") * 1.5 - (color == "blue") * 1.0 + 0.7 * x[:, 1]
    label = np.where(score > 0.8, "high", np.where(score < -0.5, "low", "mid"))
    df = pd.DataFrame(x, columns=["a", "b", "c", "d"])
    df["color"] = color
    df["size"] = size
    for col in ("a", "c", "color"):
        df.loc[rng.random(n) < 0.1, col] = np.nan
    df.insert(0, "PassengerId", [f"p{i:05d}" for i in range(n)])
    df["label"] = label
    cut = int(n * 0.8)
    train, test = df.iloc[:cut], df.iloc[cut:].drop(columns="label")
    sample = pd.DataFrame({"PassengerId": test["PassengerId"], "label": "mid"})
    return _write(dest, train, test, sample)


def regression_task(dest: Path, n: int = 1200) -> Path:
    rng = np.random.default_rng(3)
    x = rng.uniform(-2, 2, size=(n, 5))
    cat = rng.choice(["north", "south"], size=n)
    y = 3 * x[:, 0] + x[:, 1] ** 2 - 2 * x[:, 2] * (cat == "north") + rng.normal(scale=0.5, size=n) + 10
    df = pd.DataFrame(x, columns=[f"x{i}" for i in range(5)])
    df["region"] = cat
    df.insert(0, "row_id", np.arange(n))
    df["price"] = y
    cut = int(n * 0.8)
    train, test = df.iloc[:cut], df.iloc[cut:].drop(columns="price")
    sample = pd.DataFrame({"row_id": test["row_id"], "price": 0.0})
    return _write(dest, train, test, sample)


def noisy_logloss_task(dest: Path, n: int = 600) -> Path:
    """Three overlapping classes with 15 % of labels flipped, scored by log-loss: a boosted model
    fit on 300 rows is sure of itself where the labels are not. The test answers are written
    beside the public directory (``../answers.csv``) so a test can grade the submission."""
    rng = np.random.default_rng(4)
    x = rng.normal(size=(n, 3))
    label = np.array(["low", "mid", "high"])[np.digitize(x[:, 0] + 0.6 * x[:, 1], [-0.5, 0.5])]
    flip = rng.random(n) < 0.15
    label[flip] = rng.choice(["low", "mid", "high"], size=int(flip.sum()))
    df = pd.DataFrame(x, columns=["u", "v", "w"])
    df.insert(0, "id", np.arange(n))
    df["label"] = label
    cut = n // 2
    train, test = df.iloc[:cut], df.iloc[cut:]
    dest.mkdir(parents=True, exist_ok=True)
    test[["id", "label"]].to_csv(dest.parent / "answers.csv", index=False)
    sample = pd.DataFrame({"id": test["id"], "high": 1 / 3, "low": 1 / 3, "mid": 1 / 3})
    return _write(dest, train, test.drop(columns="label"), sample)


def dated_counts_task(dest: Path, n: int = 900) -> Path:
    """A count whose mean is multiplicative (log link) in a weekday effect, a store with many
    levels (text) and a number; the date is text, and test dates come after every training date."""
    rng = np.random.default_rng(5)
    days = pd.Timestamp("2020-01-01") + pd.to_timedelta(np.arange(n) // 3, unit="D")
    store = rng.choice([f"store_{i:02d}" for i in range(30)], size=n)
    effect = {f"store_{i:02d}": v for i, v in enumerate(rng.normal(scale=0.6, size=30))}
    x = rng.normal(size=n)
    rate = np.exp(0.8 + 0.9 * (days.day_of_week >= 5) + np.array([effect[s] for s in store]) + 0.4 * x)
    df = pd.DataFrame({"id": np.arange(n), "date": days.strftime("%Y-%m-%d"), "store": store, "x": x,
                       "sales": rng.poisson(rate)})
    cut = int(n * 0.8)
    train, test = df.iloc[:cut], df.iloc[cut:].drop(columns="sales")
    sample = pd.DataFrame({"id": test["id"], "sales": 0.0})
    return _write(dest, train, test, sample)


def regions_task(dest: Path, n: int = 1600) -> Path:
    """Which of 16 regions (a 4 x 4 grid of two-letter codes) a point lies in, from its two
    coordinates: many classes, as state-from-coordinates is."""
    rng = np.random.default_rng(6)
    lat, lon = rng.uniform(0, 4, size=n), rng.uniform(0, 4, size=n)
    codes = np.array([a + b for a in "ABCD" for b in "WXYZ"])
    df = pd.DataFrame({"id": np.arange(n), "latitude": lat, "longitude": lon,
                       "region": codes[lat.astype(int) * 4 + lon.astype(int)]})
    cut = int(n * 0.8)
    train, test = df.iloc[:cut], df.iloc[cut:].drop(columns="region")
    sample = pd.DataFrame({"id": test["id"], "region": "AW"})
    return _write(dest, train, test, sample)


def named_products_task(dest: Path, n: int = 1000) -> Path:
    """Which of four technologies a product is, told only by its maker: the first word of a name
    that differs on every row ("Vela Solar VX-4821"); one name in twenty is missing, and a date
    column is text that also differs on nearly every row."""
    rng = np.random.default_rng(7)
    makers = [f"{a}{b}" for a in ("Sol", "Vel", "Tor", "Kan", "Mir") for b in ("ar", "ex", "io", "um", "on", "ta", "ix", "os")]
    tech = {m: ["mono", "multi", "thin", "cdte"][i % 4] for i, m in enumerate(makers)}
    maker = rng.choice(makers, size=n)
    name = pd.Series([f"{m} {rng.choice(['Solar', 'Energy', 'Power'])} {m[:2].upper()}-{i:05d}"
                      for i, m in enumerate(maker)], dtype=object)
    name[rng.random(n) < 0.05] = np.nan
    days = (pd.Timestamp("2000-01-01") + pd.to_timedelta(rng.permutation(n) * 3, unit="D")).strftime("%Y-%m-%d")
    df = pd.DataFrame({"id": np.arange(n), "name": name, "listed": days, "watts": rng.normal(300, 40, size=n),
                       "technology": [tech[m] for m in maker]})
    cut = int(n * 0.8)
    train, test = df.iloc[:cut], df.iloc[cut:].drop(columns="technology")
    sample = pd.DataFrame({"id": test["id"], "technology": "mono"})
    return _write(dest, train, test, sample)


def rare_class_task(dest: Path, n: int = 1600) -> Path:
    """Two classes from the sign of a sum, and a third class of only two training rows (solar
    modules' rare technologies): a fit on part of the rows can hold one member of it, or none."""
    rng = np.random.default_rng(8)
    x = rng.normal(size=(n, 4))
    label = np.where(x[:, 0] + 0.5 * x[:, 1] > 0, "up", "down").astype(object)
    label[[3, 11]] = "rare"
    df = pd.DataFrame(x, columns=["a", "b", "c", "d"])
    df.insert(0, "id", np.arange(n))
    df["kind"] = label
    cut = int(n * 0.8)
    train, test = df.iloc[:cut], df.iloc[cut:].drop(columns="kind")
    sample = pd.DataFrame({"id": test["id"], "kind": "up"})
    return _write(dest, train, test, sample)


def faint_gaps_task(dest: Path, n: int = 2000) -> Path:
    """A distance from a brightness that is not measured for most of the far objects (galaxy
    velocities' V magnitude, missing on two thirds of the faint galaxies): where ``brightness`` is
    missing the object is far, so a median in its place says the opposite of what the gap says."""
    rng = np.random.default_rng(9)
    distance = rng.gamma(2.0, 50.0, size=n)
    brightness = 20.0 - 5.0 * np.log10(distance) + rng.normal(scale=0.3, size=n)
    brightness[(distance > np.quantile(distance, 0.5)) & (rng.random(n) < 0.8)] = np.nan
    df = pd.DataFrame({"id": np.arange(n), "brightness": brightness, "size": 30.0 / distance * rng.lognormal(0, 0.6, n),
                       "noise": rng.normal(size=n), "distance": distance})
    cut = int(n * 0.8)
    train, test = df.iloc[:cut], df.iloc[cut:].drop(columns="distance")
    sample = pd.DataFrame({"id": test["id"], "distance": 0.0})
    return _write(dest, train, test, sample)


def far_row_task(dest: Path, n: int = 600) -> Path:
    """A linear target within 40-160 on features within 0-10, and two test rows far outside them
    (x = 1,000 and -1,000): a linear model extrapolates them to thousands, every tree does not."""
    rng = np.random.default_rng(11)
    x = rng.uniform(0, 10, size=(n, 3))
    df = pd.DataFrame(x, columns=["x", "u", "v"])
    df.insert(0, "id", np.arange(n))
    df["amount"] = 50 + 10 * df["x"] + rng.normal(scale=3, size=n)
    cut = int(n * 0.8)
    train, test = df.iloc[:cut], df.iloc[cut:].drop(columns="amount").reset_index(drop=True)
    test.loc[:1, "x"] = [1000.0, -1000.0]
    sample = pd.DataFrame({"id": test["id"], "amount": 0.0})
    return _write(dest, train, test, sample)


TASKS = {
    "binary": (binary_task, TaskType.classification, "roc_auc", MetricDirection.maximize),
    "multiclass": (multiclass_task, TaskType.classification, "accuracy", MetricDirection.maximize),
    "regression": (regression_task, TaskType.regression, "rmse", MetricDirection.minimize),
    # The same tables at 480 rows, for tests of seed bags: what they show is how many fits a bag
    # makes and keeps, which the table's size does not change, and each fit costs less.
    "multiclass-480": (partial(multiclass_task, n=480), TaskType.classification, "accuracy", MetricDirection.maximize),
    "regression-480": (partial(regression_task, n=480), TaskType.regression, "rmse", MetricDirection.minimize),
    "dated-counts": (dated_counts_task, TaskType.regression, "rmse", MetricDirection.minimize),
    "far-row": (far_row_task, TaskType.regression, "rmse", MetricDirection.minimize),
    # Enough rows (2,400 to train on) that early stopping has a held-out tenth to read.
    "dated-counts-3k": (partial(dated_counts_task, n=3000), TaskType.regression, "rmse", MetricDirection.minimize),
    "regions": (regions_task, TaskType.classification, "accuracy", MetricDirection.maximize),
    "named-products": (named_products_task, TaskType.classification, "accuracy", MetricDirection.maximize),
    "noisy-logloss": (noisy_logloss_task, TaskType.classification, "logloss", MetricDirection.minimize),
    "rare-class": (rare_class_task, TaskType.classification, "accuracy", MetricDirection.maximize),
    "faint-gaps": (faint_gaps_task, TaskType.regression, "rmse", MetricDirection.minimize),
}


def make_task(name: str, dest: Path) -> tuple[Path, TaskDescription]:
    maker, task_type, metric, direction = TASKS[name]
    data_dir = maker(dest)
    task = TaskDescription(
        competition_id=f"builtin-{name}",
        task_type=task_type,
        data_modality=DataModality.tabular,
        evaluation_metric=metric,
        metric_direction=direction,
        description=f"Predict the target of the synthetic {name} task. Metric: {metric}.",
    )
    return data_dir, task
