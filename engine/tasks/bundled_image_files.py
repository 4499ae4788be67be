"""An image task's files in the Kaggle folder layout, rendered from a packed array of pixels.

A bundled image task ships its pixels as one gzip-compressed ``.npy`` file (a few hundred KB for
thousands of small images, where as many PNG files would weigh several times that in the
repository). Preparing it writes ``train/<id>.png`` and ``test/<id>.png`` beside ``train.csv``
(id and label) and the sample submission, as an image competition's download arrives. The PNGs
are written here with zlib (Pillow is not a dependency of the engine): 8-bit grey or RGB, every
row unfiltered, fixed compression, so preparing twice gives the same bytes.
"""

from __future__ import annotations

import gzip
import io
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources

import numpy as np
import pandas as pd

from engine.tasks.bundled_spec import SOURCE_ROW, BundledSpec
from engine.tasks.model import TaskError

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def vendored_pixels(name: str) -> Callable[[], np.ndarray]:
    """A loader of one packed ``.npy.gz`` array of uint8 images from ``engine/tasks/data``."""
    def load() -> np.ndarray:
        with (resources.files("engine.tasks") / "data" / name).open("rb") as handle:
            raw = gzip.decompress(handle.read())
        return np.load(io.BytesIO(raw), allow_pickle=False)

    return load


def png_bytes(pixels: np.ndarray) -> bytes:
    """An 8-bit grey (h, w) or RGB (h, w, 3) uint8 array as the bytes of a PNG file."""
    image = np.ascontiguousarray(pixels, dtype=np.uint8)
    if image.ndim == 2:
        image = image[:, :, None]
    height, width, channels = image.shape
    if channels not in (1, 3):
        raise TaskError(f"a bundled image has {channels} channels; grey (1) or RGB (3) are written")
    # Filter type 0 (none) before each row.
    rows = np.concatenate([np.zeros((height, 1), np.uint8), image.reshape(height, width * channels)], axis=1)
    header = struct.pack(">IIBBBBB", width, height, 8, 0 if channels == 1 else 2, 0, 0, 0)
    return (PNG_SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(rows.tobytes(), 9))
            + _chunk(b"IEND", b""))


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


@dataclass(frozen=True)
class ImageSplit:
    """The split's tables without ``SOURCE_ROW``, each row's pixels, and the PNG files."""

    train: pd.DataFrame
    test: pd.DataFrame
    train_pixels: np.ndarray
    test_pixels: np.ndarray
    files: dict[str, bytes]


def image_split(spec: BundledSpec, train: pd.DataFrame, test: pd.DataFrame, id_column: str) -> ImageSplit:
    """The image files of an already split image task: train/<id>.png and test/<id>.png."""
    if spec.images is None:
        raise TaskError(f"bundled task {spec.name} has no images")
    pixels = spec.images()
    train_pixels = pixels[train[SOURCE_ROW].to_numpy()]
    test_pixels = pixels[test[SOURCE_ROW].to_numpy()]
    files: dict[str, bytes] = {}
    for folder, frame, images in (("train", train, train_pixels), ("test", test, test_pixels)):
        for row_id, image in zip(frame[id_column], images, strict=True):
            files[f"public/{folder}/{row_id}.png"] = png_bytes(image)
    return ImageSplit(train.drop(columns=SOURCE_ROW), test.drop(columns=SOURCE_ROW),
                      train_pixels, test_pixels, files)
