"""Image tasks in the Kaggle folder layout: train.csv (id, label), train/<id>.png, test/<id>.png,
sample_submission.csv (id, label), description.md.

Two sources: scikit-learn's bundled handwritten digits (real scans, 8x8 grey, 10 classes, 1,797
images; scaled up to 32x32 by repeated pixels), and seeded shapes drawn with numpy (32x32 colour:
discs, squares, triangles, rings, crosses, bars and their places, sizes and colours drawn at
random, with noise). The PNGs are written here with zlib, each row under one of the five PNG
filters in turn, so the agent's own decoder meets every filter.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

SHAPES = ("disc", "square", "triangle", "ring", "cross", "hbar", "vbar", "diamond", "corner", "dots")


def png_bytes(pixels: np.ndarray) -> bytes:
    """An 8-bit grey (h, w) or RGB (h, w, 3) array as PNG bytes, row r under filter r % 5."""
    image = pixels.reshape(pixels.shape[0], pixels.shape[1], -1).astype(np.uint8)
    height, width, channels = image.shape
    raw = bytearray()
    prior = np.zeros(width * channels, dtype=np.int32)
    for r in range(height):
        row = image[r].reshape(-1).astype(np.int32)
        kind = r % 5
        raw.append(kind)
        raw += _filtered(kind, row, prior, channels).astype(np.uint8).tobytes()
        prior = row
    colour = 0 if channels == 1 else 2

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, colour, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(bytes(raw)))
            + chunk(b"IEND", b""))


def _filtered(kind: int, row: np.ndarray, prior: np.ndarray, step: int) -> np.ndarray:
    left = np.concatenate([np.zeros(step, dtype=np.int32), row[:-step]])
    corner = np.concatenate([np.zeros(step, dtype=np.int32), prior[:-step]])
    if kind == 0:
        predicted = np.zeros_like(row)
    elif kind == 1:
        predicted = left
    elif kind == 2:
        predicted = prior
    elif kind == 3:
        predicted = (left + prior) // 2
    else:
        p = left + prior - corner
        pa, pb, pc = np.abs(p - left), np.abs(p - prior), np.abs(p - corner)
        predicted = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, prior, corner))
    return (row - predicted) & 255


def write_folder_task(dest: Path, images: np.ndarray, labels: np.ndarray, *, test_share: float = 0.2,
                      seed: int = 0, test_csv: bool = False) -> tuple[Path, pd.DataFrame]:
    """The task in dest/ and the test rows' true labels (kept out of dest/)."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(images))
    cut = int(len(images) * (1 - test_share))
    ids = np.array([f"img{i:05d}" for i in range(len(images))])
    for folder, rows in (("train", order[:cut]), ("test", order[cut:])):
        (dest / folder).mkdir(parents=True, exist_ok=True)
        for i in rows:
            (dest / folder / f"{ids[i]}.png").write_bytes(png_bytes(images[i]))
    pd.DataFrame({"id": ids[order[:cut]], "label": labels[order[:cut]]}).to_csv(dest / "train.csv", index=False)
    test_ids = ids[order[cut:]]
    pd.DataFrame({"id": test_ids, "label": labels[order[0]]}).to_csv(dest / "sample_submission.csv", index=False)
    if test_csv:
        pd.DataFrame({"id": test_ids}).to_csv(dest / "test.csv", index=False)
    (dest / "description.md").write_text(
        "# Images\n\nClassify each image in test/ into one of the labels of train.csv.\n\n"
        "## Evaluation\n\nAccuracy.\n")
    return dest, pd.DataFrame({"id": test_ids, "label": labels[order[cut:]]})


def digits_images(size: int = 32) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's 8x8 digit scans as 0-255 grey images of size x size, and their labels."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    grey = np.clip(digits.images * 16, 0, 255)
    scale = size // 8
    return np.kron(grey, np.ones((scale, scale))).astype(np.uint8), digits.target.astype(int)


def shapes_images(n: int, seed: int = 0, size: int = 32) -> tuple[np.ndarray, np.ndarray]:
    """n colour images of the ten SHAPES, and their names."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:size, 0:size].astype(float)
    images = np.empty((n, size, size, 3), dtype=np.uint8)
    labels = rng.integers(0, len(SHAPES), size=n)
    for i, label in enumerate(labels):
        cy, cx = rng.uniform(size * 0.3, size * 0.7, size=2)
        r = rng.uniform(size * 0.15, size * 0.28)
        mask = _shape_mask(SHAPES[label], yy - cy, xx - cx, r)
        background = rng.uniform(0, 120, size=3)
        colour = rng.uniform(130, 255, size=3)
        image = np.where(mask[..., None], colour, background) + rng.normal(0, 18, size=(size, size, 3))
        images[i] = np.clip(image, 0, 255)
    return images, np.array(SHAPES)[labels]


def _shape_mask(shape: str, dy: np.ndarray, dx: np.ndarray, r: float) -> np.ndarray:
    dist = np.hypot(dy, dx)
    masks = {
        "disc": dist <= r,
        "square": (np.abs(dy) <= r * 0.8) & (np.abs(dx) <= r * 0.8),
        "triangle": (dy <= r * 0.8) & (dy >= -r) & (np.abs(dx) <= (dy + r) * 0.6),
        "ring": (dist <= r) & (dist >= r * 0.6),
        "cross": ((np.abs(dy) <= r * 0.25) | (np.abs(dx) <= r * 0.25)) & (np.maximum(np.abs(dy), np.abs(dx)) <= r),
        "hbar": (np.abs(dy) <= r * 0.3) & (np.abs(dx) <= r),
        "vbar": (np.abs(dx) <= r * 0.3) & (np.abs(dy) <= r),
        "diamond": np.abs(dy) + np.abs(dx) <= r,
        "corner": ((np.abs(dy + r * 0.6) <= r * 0.25) | (np.abs(dx + r * 0.6) <= r * 0.25))
        & (dy >= -r) & (dx >= -r) & (dy <= r) & (dx <= r),
        "dots": (np.hypot(dy - r * 0.5, dx - r * 0.5) <= r * 0.3) | (np.hypot(dy + r * 0.5, dx + r * 0.5) <= r * 0.3),
    }
    return masks[shape]
