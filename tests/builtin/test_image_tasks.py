"""The builtin agent on image tasks in the Kaggle folder layout: it finds the images, reads them
(PNG without Pillow), and a whole quick run ends with a valid submission."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from engine.agents.builtin.blocks import script_text
from engine.agents.builtin.image_task import image_gene
from tests.builtin.datasets import binary_task
from tests.builtin.image_tasks import digits_images, png_bytes, shapes_images, write_folder_task
from tests.support.shared_runs import LEAN_RUN

REPO = Path(__file__).resolve().parents[2]


def _reader() -> dict:
    names: dict = {"np": np, "SEED": 0}
    exec(script_text("image_read") + script_text("image_features"), names)
    return names


@settings(max_examples=40, deadline=None)
@given(arrays(np.uint8, st.tuples(st.integers(1, 12), st.integers(1, 12), st.sampled_from([1, 3]))))
def test_the_scripts_png_decoder_gives_back_every_pixel_under_every_filter(pixels: np.ndarray) -> None:
    image = pixels[:, :, 0] if pixels.shape[2] == 1 else pixels
    decoded = _reader()["decode_png"](png_bytes(image))
    assert np.array_equal(decoded.reshape(pixels.shape), pixels)


def test_features_have_one_row_per_image_and_finite_values() -> None:
    images, _ = shapes_images(12, seed=3)
    read = _reader()
    array = images.astype(np.float32) / 255
    for name, make in read["IMAGE_FEATURE_MAKERS"].items():
        values = make(array)
        assert values.shape[0] == 12 and values.shape[1] > 0, name
        assert np.isfinite(values).all(), name


def test_an_image_task_gets_an_image_gene_and_a_table_task_none(tmp_path: Path) -> None:
    images, labels = digits_images(size=16)
    task, _ = write_folder_task(tmp_path / "digits", images[:60], labels[:60])
    gene = image_gene(task)
    assert gene is not None and (gene["train_dir"], gene["test_dir"], gene["column"]) == ("train", "test", None)
    assert image_gene(binary_task(tmp_path / "table")) is None


def test_a_quick_run_on_an_image_folder_task_ends_with_a_valid_submission(tmp_path: Path) -> None:
    images, labels = digits_images(size=8)
    # 200 images (160 to train on) are enough to show the pixels were read; the run's cost (its
    # boosters' fits above all) grows with the rows, and the rows are not the point here.
    task, answers = write_folder_task(tmp_path / "digits", images[:200], labels[:200], seed=1)
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200"}
    run = subprocess.run(
        [sys.executable, "-m", "engine.cli.main", "start", "--task", str(task), "--agent", "builtin",
         "--preset", "quick", "--sandbox", "none", "--db", str(tmp_path / "engine.db"), "--run-id", "img", *LEAN_RUN],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1500)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    submissions = sorted(tmp_path.rglob("submission.csv"))
    assert submissions, run.stdout[-2000:]
    sub = pd.read_csv(submissions[-1])
    assert list(sub.columns) == ["id", "label"] and sorted(sub["id"]) == sorted(answers["id"])
    accuracy = (sub.set_index("id").loc[answers["id"], "label"].to_numpy() == answers["label"].to_numpy()).mean()
    # Ten classes: chance is 0.1; the digits are easy once the pixels are read at all.
    assert accuracy > 0.7, accuracy
