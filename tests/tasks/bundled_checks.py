"""Checks every set of bundled tables gets (the held-out set, and each former held-out set that
is a development set now): the table's shape, target and metric, a stable split, an offline
preparation with the answers private, and the same bytes when prepared twice. Each test module
keeps only what is particular to its tables."""

from __future__ import annotations

import socket
from pathlib import Path

import pandas as pd
import pytest

from engine.tasks import bundled, load_task, prepare_bundled
from engine.tasks.bundled import TEST_FRACTION, _split
from engine.tasks.bundled_data import SPECS

# name: (rows, columns with the target, target, metric)
Expected = dict[str, tuple[int, int, str, str]]
PREPARED_FILES = ("public/train.csv", "public/test.csv", "public/sample_submission.csv",
                  "public/description.md", "private/answers.csv", "task.json")


def check_table(name: str, expected: Expected) -> None:
    rows, columns, target, metric = expected[name]
    spec, frame = SPECS[name], SPECS[name].load()
    assert frame.shape == (rows, columns)
    assert spec.target == target == frame.columns[-1] and spec.metric == metric
    assert frame[target].notna().all()
    assert spec.seed not in {s.seed for s in SPECS.values() if s.name != name}    # its own split


def check_split(name: str) -> None:
    """The same split every time, three tenths held out, no row on both sides, every column with
    a value to learn and every class on both sides."""
    spec = SPECS[name]
    (train, test), (train_again, test_again) = _split(spec), _split(spec)
    pd.testing.assert_frame_equal(train, train_again)
    pd.testing.assert_frame_equal(test, test_again)
    assert abs(len(test) / (len(train) + len(test)) - TEST_FRACTION) < 0.01
    assert not set(train["id"]) & set(test["id"])
    assert not [c for c in train.columns if train[c].isna().all()]
    if spec.task_type.value == "classification":
        assert set(train[spec.target]) == set(test[spec.target])


def _no_network(*args, **kwargs):
    raise AssertionError("preparing a bundled task tried to open a network connection")


def prepare_offline(root: Path, full: list[str], stubbed: list[str]) -> dict[str, Path]:
    """Every task prepared with no network; ``stubbed`` ones with the reference model's score
    stubbed (the reference model is the same code for every task; some take a minute)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket.socket, "connect", _no_network)
        done = {name: prepare_bundled(name, root / name) for name in full}
        patch.setattr(bundled, "reference_score", lambda scoring, train, features, answers: 1.0)
        done.update({name: prepare_bundled(name, root / name) for name in stubbed})
        return done


def check_prepared(name: str, expected: Expected, prepared: dict[str, Path], full: list[str]) -> None:
    task = load_task(prepared[name])
    train, test, answers = pd.read_csv(task.train_file), pd.read_csv(task.test_file), pd.read_csv(task.answers)
    rows, _, target, metric = expected[name]
    assert len(train) + len(test) == rows and target in train.columns and target not in test.columns
    assert list(test.columns) == ["id", *[c for c in train.columns if c not in ("id", target)]]
    assert list(test["id"]) == list(answers["id"])
    if SPECS[name].per_class_probabilities:                                  # one column per class
        assert sorted(task.target_columns) == sorted(train[target].unique())
    assert task.metric == metric and task.bundled == name
    board = task.leaderboard
    assert board.reference_score is not None and board.naive_baseline is not None
    if name in full:
        assert board.reference_score != board.naive_baseline


def check_same_bytes(name: str, first: Path, tmp_path: Path) -> None:
    again = prepare_bundled(name, tmp_path / name)
    for rel in PREPARED_FILES:
        assert (first / "prepared" / rel).read_bytes() == (again / "prepared" / rel).read_bytes(), rel
