"""The image DATA gene, part 2: features a CPU computes in seconds, one function per kind.

Each takes the (n, size, size, channels) array of ``image_read.py`` and returns an (n, k) float32
matrix; the gene names which ones a script uses (``IMAGE_FEATURES``). No pretrained weights: the
convolution filters are random, drawn from the script's seed.
"""

# mypy: allow-untyped-defs

from engine.agents.builtin.script_blocks.image_read import resample
from engine.agents.builtin.script_blocks.names import SEED, np

# --- script ---
PIXEL_SIZE = 12
HOG_CELLS = 4
HOG_BINS = 9
CONV_FILTERS = 16
CONV_WIDTH = 5


def grey(images):
    return images.mean(axis=3)


def pixels(images):
    """The image shrunk to PIXEL_SIZE a side, every channel."""
    small = resample(resample(images, 1, PIXEL_SIZE), 2, PIXEL_SIZE)
    return small.reshape(len(images), -1)


def gradients(images):
    """Histograms of gradient orientation on a HOG_CELLS grid, weighted by magnitude, each cell
    normalised (HOG without block overlap)."""
    side = HOG_CELLS * max(2, images.shape[1] // HOG_CELLS)
    g = resample(resample(grey(images), 1, side), 2, side)
    gx = np.zeros_like(g)
    gy = np.zeros_like(g)
    gx[:, :, 1:-1] = g[:, :, 2:] - g[:, :, :-2]
    gy[:, 1:-1, :] = g[:, 2:, :] - g[:, :-2, :]
    magnitude = np.hypot(gx, gy)
    bins = np.minimum((np.mod(np.arctan2(gy, gx), np.pi) / np.pi * HOG_BINS).astype(int), HOG_BINS - 1)
    cell = side // HOG_CELLS
    hist = np.zeros((len(images), HOG_CELLS, HOG_CELLS, HOG_BINS), dtype=np.float32)
    for b in range(HOG_BINS):
        weighted = np.where(bins == b, magnitude, 0.0)
        hist[..., b] = weighted.reshape(len(images), HOG_CELLS, cell, HOG_CELLS, cell).sum(axis=(2, 4))
    hist /= np.sqrt((hist ** 2).sum(axis=3, keepdims=True)) + 1e-3
    return np.sqrt(hist).reshape(len(images), -1)


def colours(images):
    """Per channel: an 8-bin intensity histogram, the mean and the spread."""
    parts = []
    for c in range(images.shape[3]):
        channel = images[:, :, :, c].reshape(len(images), -1)
        bins = np.minimum((channel * 8).astype(int), 7)
        parts.append(np.stack([(bins == b).mean(axis=1) for b in range(8)], axis=1))
        parts.append(np.stack([channel.mean(axis=1), channel.std(axis=1)], axis=1))
    return np.concatenate(parts, axis=1)


def random_convolutions(images):
    """Random zero-mean filters over the grey image, rectified both ways and mean-pooled on a
    2x2 grid plus a global max: a one-layer network that is never trained."""
    rng = np.random.default_rng(SEED)
    filters = rng.normal(size=(CONV_FILTERS, CONV_WIDTH, CONV_WIDTH)).astype(np.float32)
    filters -= filters.mean(axis=(1, 2), keepdims=True)
    filters /= np.sqrt((filters ** 2).sum(axis=(1, 2), keepdims=True))
    side = max(CONV_WIDTH + 4, min(images.shape[1], 24))
    g = resample(resample(grey(images), 1, side), 2, side)
    out = []
    for start in range(0, len(g), 512):
        windows = np.lib.stride_tricks.sliding_window_view(g[start:start + 512], (CONV_WIDTH, CONV_WIDTH), axis=(1, 2))
        maps = np.tensordot(windows, filters, axes=([3, 4], [1, 2]))
        half = maps.shape[1] // 2
        pooled = []
        for response in (np.maximum(maps, 0), np.maximum(-maps, 0)):
            quads = [response[:, :half, :half], response[:, :half, half:], response[:, half:, :half],
                     response[:, half:, half:]]
            pooled += [q.mean(axis=(1, 2)) for q in quads] + [response.max(axis=(1, 2))]
        out.append(np.concatenate(pooled, axis=1))
    return np.concatenate(out, axis=0)


IMAGE_FEATURE_MAKERS = {"pixels": pixels, "gradients": gradients, "colours": colours,
                        "random_convolutions": random_convolutions}
