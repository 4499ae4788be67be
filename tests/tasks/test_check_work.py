"""The task check `engine start` runs first does work in proportion to the task, counted, not timed.

Its comparison of the sample submission's ids with the test ids once built a set of all ids for
every id (quadratic: a 25k-row test file held a 120 s run minutes before its first step). The
sets it builds are counted here through the module's own name for ``set``: their number must not
grow with the rows.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from pathlib import Path

import pandas as pd
import pytest

from engine.tasks import check_data
from engine.tasks.check import check_task
from tests.tasks.folders import regression


def _sets_built(monkeypatch: pytest.MonkeyPatch, root: Path) -> tuple[int, list[str]]:
    built = [0]

    def counting_set(*args: Iterable[object]) -> set[object]:
        built[0] += 1
        return builtins.set(*args)

    monkeypatch.setattr(check_data, "set", counting_set, raising=False)
    problems = [p.line() for p in check_task(root).problems]
    monkeypatch.undo()
    return built[0], problems


@pytest.mark.parametrize("mismatch", [False, True], ids=["ids agree", "ids differ"])
def test_the_id_comparison_builds_the_same_sets_for_ten_times_the_rows(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                                       mismatch: bool) -> None:
    counts = []
    for n in (200, 2000):
        root = regression(tmp_path / f"rows-{n}", n=n)
        if mismatch:  # one test id missing from the sample and one the test data does not hold
            sample = pd.read_csv(root / "sample_submission.csv")
            sample.loc[0, "id"] = 10 * n
            sample.to_csv(root / "sample_submission.csv", index=False)
        built, problems = _sets_built(monkeypatch, root)
        counts.append(built)
        said = [p for p in problems if "the sample submission's ids are not the test ids" in p]
        if mismatch:
            assert said and "1 id(s) not in the test data" in said[0] and "1 test id(s) missing" in said[0], problems
        else:
            assert not said, problems
    assert counts[0] == counts[1] and counts[0] <= 4, counts  # the ids' sets, once each


def test_each_column_s_modality_is_worked_out_once_per_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Reading every value of a column (a text column of 113k rows) is done once per file it is in,
    though the column list and the image check both ask."""
    root = regression(tmp_path / "task", n=200)
    asked: list[str] = []
    real = check_data.modality

    def counting_modality(series: pd.Series) -> str:
        asked.append(str(series.name))
        return real(series)

    monkeypatch.setattr(check_data, "modality", counting_modality)
    check_task(root)
    train, test = pd.read_csv(root / "train.csv"), pd.read_csv(root / "test.csv")
    per_file = [c for c in train.columns if c != "id"] + [c for c in test.columns if c != "id"]
    assert sorted(asked) == sorted(per_file + ["id", "id"]), asked  # the image check asks of the id column too
