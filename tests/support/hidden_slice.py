"""A real task with a held-back slice, for the tests of docs/final-choice-slice.md: the bundled
``wage-education`` (2,100 training rows, a slice of 210; text values with empty cells), prepared
and drawn once per test module."""

from __future__ import annotations

import pytest

from engine.grading.hidden_slice import HiddenSlice, draw_hidden_slice
from engine.tasks import load_task, prepare_bundled
from engine.tasks.model import LoadedTask

SLICE_TASK = "wage-education"
SLICE_SEED = 0


@pytest.fixture(scope="module")
def task(tmp_path_factory: pytest.TempPathFactory) -> LoadedTask:
    return load_task(prepare_bundled(SLICE_TASK, tmp_path_factory.mktemp("bundled") / SLICE_TASK))


@pytest.fixture(scope="module")
def drawn(task: LoadedTask, tmp_path_factory: pytest.TempPathFactory) -> HiddenSlice:
    hidden = draw_hidden_slice(task, SLICE_SEED, tmp_path_factory.mktemp("slice") / "hidden-slice")
    assert isinstance(hidden, HiddenSlice), hidden
    return hidden
