"""The image DATA gene, part 1: image files read into one array of a common size.

Pillow reads every format it knows when it is installed; without it, PNG (8-bit, not interlaced,
every colour type) is decoded here with zlib and numpy, since Pillow is not a dependency of the
engine. Each image becomes (size, size, channels) floats in [0, 1], resized by area averaging
(or repeated pixels when it is smaller), its alpha dropped.
"""

# mypy: allow-untyped-defs
# The script's own imports come below its mark, after the linters' import of earlier names:
# ruff: noqa: I001

from engine.agents.builtin.script_blocks.names import np

# --- script ---
import struct
import zlib

try:  # optional: Pillow reads JPEG and every other format; PNG is decoded below without it
    from PIL import Image
except ImportError:
    Image = None
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PNG_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def png_chunks(data):
    """(IHDR fields, palette, compressed pixel bytes) of a PNG file's bytes."""
    pos, header, palette, idat = 8, None, None, []
    while pos + 8 <= len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        kind, chunk = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"PLTE":
            palette = np.frombuffer(chunk, np.uint8).reshape(-1, 3)
        elif kind == b"IDAT":
            idat.append(chunk)
        elif kind == b"IEND":
            break
    return header, palette, b"".join(idat)


def unfilter_row(kind, row, prior, step):
    """One scanline's bytes with its PNG filter undone (prior: the row above, already undone)."""
    if kind == 0:
        return row
    if kind == 2:
        return (row + prior) & 255
    if kind == 1:
        return np.cumsum(row.reshape(-1, step), axis=0).reshape(-1) & 255
    out = row.astype(np.int32).tolist()
    up = prior.astype(np.int32).tolist()
    for i in range(len(out)):
        left = out[i - step] if i >= step else 0
        if kind == 3:
            out[i] = (out[i] + (left + up[i]) // 2) & 255
            continue
        corner = up[i - step] if i >= step else 0
        p = left + up[i] - corner
        pa, pb, pc = abs(p - left), abs(p - up[i]), abs(p - corner)
        out[i] = (out[i] + (left if pa <= pb and pa <= pc else up[i] if pb <= pc else corner)) & 255
    return np.asarray(out, dtype=np.int32)


def decode_png(data):
    """A PNG's pixels as a (height, width, channels) uint8 array, palette colours looked up."""
    (width, height, depth, colour, _, _, interlace), palette, packed = png_chunks(data)
    if depth != 8 or interlace:
        raise ValueError(f"PNG of bit depth {depth}, interlace {interlace}: install Pillow to read it")
    step = PNG_CHANNELS[colour]
    rows = np.frombuffer(zlib.decompress(packed), np.uint8).reshape(height, width * step + 1)
    prior = np.zeros(width * step, dtype=np.int32)
    pixels = np.empty((height, width * step), dtype=np.uint8)
    for r in range(height):
        prior = unfilter_row(int(rows[r, 0]), rows[r, 1:].astype(np.int32), prior, step)
        pixels[r] = prior
    image = pixels.reshape(height, width, step)
    return palette[image[:, :, 0]] if colour == 3 else image


def load_pixels(path):
    """An image file as (height, width, 1 or 3) floats in [0, 1], its alpha dropped."""
    with open(path, "rb") as fh:
        data = fh.read()
    if data[:8] == PNG_SIGNATURE and Image is None:
        image = decode_png(data)
    elif Image is not None:
        with Image.open(path) as opened:
            image = np.asarray(opened.convert("RGB" if opened.mode not in ("L", "LA", "I;16", "I") else "L"))
    else:
        raise ValueError(f"{path} is not a PNG and Pillow is not installed to read it")
    image = image.reshape(image.shape[0], image.shape[1], -1)
    image = image[:, :, :3] if image.shape[2] >= 3 else image[:, :, :1]
    return image.astype(np.float32) / (65535.0 if image.max() > 255 else 255.0)


def resample(values, axis, size):
    """Area averaging down to ``size`` along one axis, repeated pixels up to it."""
    have = values.shape[axis]
    if have < size:
        return np.take(values, (np.arange(size) * have) // size, axis=axis)
    edges = (np.arange(size) * have) // size
    counts = np.diff(np.append(edges, have)).astype(np.float32)
    shape = [1] * values.ndim
    shape[axis] = size
    return np.add.reduceat(values, edges, axis=axis) / counts.reshape(shape)


def read_images(paths, size):
    """Every image at (size, size), or at its own side when the images are smaller (the first
    one's: scaling up adds features, not information), as an (n, side, side, channels) array:
    colour (three channels) when any image is in colour, grey images repeated into them."""
    images = [load_pixels(p) for p in paths]
    size = max(8, min(size, max(images[0].shape[:2]))) if images else size
    images = [resample(resample(im, 0, size), 1, size) for im in images]
    colour = any(im.shape[2] == 3 and not (np.allclose(im[:, :, 0], im[:, :, 1])
                                           and np.allclose(im[:, :, 0], im[:, :, 2])) for im in images)
    channels = 3 if colour else 1
    out = np.empty((len(images), size, size, channels), dtype=np.float32)
    for i, im in enumerate(images):
        out[i] = np.repeat(im, 3, axis=2) if colour and im.shape[2] == 1 else im[:, :, :channels]
    return out
