"""The DATA gene of an image task: ``image_read.py``, ``image_features.py`` and ``image_data.py``
in place of ``data.py`` (with the parts they share, ``render_data._labelled_rows``, at its
insertion points: the target, the search's row cap, the labels, the validation split)."""

from __future__ import annotations

from typing import Any

from engine.agents.builtin.blocks import block, insert, lines


def render_image_data(data: dict[str, Any], labelled_rows: dict[str, str]) -> str:
    images = data["images"]
    code = block("image_data", IMAGE_COLUMN=repr(images["column"]), TRAIN_IMAGES=repr(images["train_dir"]),
                 TEST_IMAGES=repr(images["test_dir"]), IMAGE_SIZE=str(int(images["size"])),
                 IMAGE_FEATURES=repr(list(images["features"])))
    return lines(block("image_read"), block("image_features"), insert(code, **labelled_rows))
