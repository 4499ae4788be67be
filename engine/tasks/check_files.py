"""Reading a task's files the way a script will, so a file that cannot be read is named, with the
byte and line at fault, before a run spends anything on it."""

from __future__ import annotations

import codecs
from pathlib import Path

import pandas as pd

_CHUNK = 1 << 20
# The first bytes of the image formats scripts read (PIL, OpenCV, torchvision all decode these).
_IMAGE_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"BM", b"II*\x00", b"MM\x00*")


class Unreadable(Exception):
    """A file that cannot be read: ``what`` names the byte/line at fault, ``fix`` what to do."""

    def __init__(self, path: Path, what: str, fix: str) -> None:
        super().__init__(f"{path}: {what}")
        self.path, self.what, self.fix = path, what, fix

    def __str__(self) -> str:
        return f"{self.path}: {self.what}"


def check_utf8(path: Path) -> None:
    """Raise ``Unreadable`` at the first byte that is not UTF-8 (read in chunks: files can be large)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset, lines = 0, 1
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(_CHUNK):
                try:
                    decoder.decode(chunk)
                except UnicodeDecodeError as exc:
                    at = offset + exc.start
                    line = lines + chunk[: exc.start].count(b"\n")
                    bad = chunk[exc.start: exc.start + 4]
                    raise Unreadable(
                        path, f"is not UTF-8 text: byte {at} (line {line}) is {bad!r}",
                        "re-save it as UTF-8 (e.g. `iconv -f latin1 -t utf-8 FILE > FILE.utf8`), "
                        "or replace it if it is not the CSV it should be") from exc
                offset += len(chunk)
                lines += chunk.count(b"\n")
            decoder.decode(b"", final=True)
    except UnicodeDecodeError as exc:
        raise Unreadable(path, f"is not UTF-8 text: it ends inside a character (byte {offset})",
                         "re-save it as UTF-8") from exc
    except OSError as exc:
        raise Unreadable(path, f"cannot be read: {exc.strerror or exc}", "check its permissions") from exc


def read_csv(path: Path, *, nrows: int | None = None, usecols: list[str] | None = None) -> pd.DataFrame:
    """The CSV as pandas reads it by default (as scripts will), or ``Unreadable`` saying why."""
    check_utf8(path)
    try:
        frame = pd.read_csv(path, nrows=nrows, usecols=usecols)
    except pd.errors.EmptyDataError as exc:
        raise Unreadable(path, "is empty (no header line)", "replace it with the competition's file") from exc
    except (pd.errors.ParserError, ValueError) as exc:
        message = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise Unreadable(path, f"is not a well-formed CSV: {message}",
                         "every line needs the header's number of fields; fix or replace the file") from exc
    if len(frame.columns) == 0:
        raise Unreadable(path, "has no columns", "replace it with the competition's file")
    return frame


def image_problem(path: Path) -> str | None:
    """Why this image file cannot be used, or None. Only its first bytes are read."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(16)
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    if not head:
        return "is empty"
    if head.startswith(_IMAGE_MAGIC) or (head[:4] == b"RIFF" and head[8:12] == b"WEBP"):
        return None
    return "is not an image (its first bytes are no PNG, JPEG, GIF, BMP, TIFF or WebP header)"
