"""Evaluation directories: ``input/`` (task data, read-only), ``final/`` (outputs), resets.

REQ-EX-001/002 plus the engine's rule that every evaluation gets its own directory, so
concurrent evaluations never share a ``solution.py`` or a ``final/`` (digest §12 traps 1, 9).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import structlog

log = structlog.get_logger(__name__)

# "bind": input/ stays an empty mount point; the sandbox binds the task's data there read-only.
InputMode = Literal["auto", "symlink", "copy", "bind"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_MAX_READABLE = 96


def setup_working_directory(base_path: str | os.PathLike[str]) -> str:
    """REQ-EX-001: make ``{base}/input`` and ``{base}/final`` (if missing); return ``base`` absolute.

    ``base_path`` is the PARENT of the data directory (digest §12 trap 1): the script runs with
    this directory as cwd and reads ``./input/...``.
    """
    base = Path(base_path).resolve()
    (base / "input").mkdir(parents=True, exist_ok=True)
    (base / "final").mkdir(parents=True, exist_ok=True)
    return str(base)


def clean_output_directory(base_path: str | os.PathLike[str]) -> None:
    """REQ-EX-002: empty ``{base}/final`` but keep the directory itself.

    Subdirectories go too: a stale ``final/`` from an earlier script must not pass for this one's
    output.
    """
    final = Path(base_path) / "final"
    if not final.is_dir():
        final.mkdir(parents=True, exist_ok=True)
        return
    for entry in final.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            remove_tree(entry)
        else:
            entry.unlink()


def safe_dir_name(effect_id: str) -> str:
    """A readable, filesystem-safe and collision-free directory name for an effect id.

    Effect ids look like ``phase2/path-1/t2/k3/eval``. Slashes become ``__`` and other odd
    characters ``_`` so the name stays readable; a short hash of the raw id is appended because
    that mapping alone is not injective (``a/b`` and ``a__b`` would otherwise collide).
    """
    readable = _UNSAFE.sub("_", effect_id.replace("/", "__")).strip("._") or "effect"
    digest = hashlib.sha256(effect_id.encode("utf-8")).hexdigest()[:8]
    return f"{readable[:_MAX_READABLE]}-{digest}"


def _make_writable_and_retry(func: Callable[[str], object], path: str, _exc: object) -> None:
    # input/ is made read-only once populated; the parent must become writable again to delete.
    parent = os.path.dirname(path)
    for target in (parent, path):
        try:
            if not os.path.islink(target):
                os.chmod(target, os.stat(target).st_mode | stat.S_IWUSR | stat.S_IXUSR | stat.S_IRUSR)
        except OSError:
            pass
    func(path)


def remove_tree(path: str | os.PathLike[str]) -> None:
    """``rmtree`` that also copes with the read-only directories this module creates."""
    p = Path(path)
    if p.is_symlink() or p.is_file():
        p.unlink()
        return
    if p.exists():
        if sys.version_info >= (3, 12):
            shutil.rmtree(p, onexc=_make_writable_and_retry)
        else:
            shutil.rmtree(p, onerror=_make_writable_and_retry)


def reset_directory(path: str | os.PathLike[str]) -> Path:
    """Remove ``path`` if it exists (an effect re-run after a crash) and create it empty."""
    p = Path(path)
    if p.exists() or p.is_symlink():
        log.info("harness.reset_eval_dir", path=str(p))
        remove_tree(p)
    p.mkdir(parents=True)
    return p


def _resolve_mode(mode: InputMode) -> Literal["symlink", "copy", "bind"]:
    if mode != "auto":
        return mode
    # Permission bits do not stop root, so a symlink to a read-only file would still let a
    # script running as root overwrite the task's data; a private copy cannot leak back.
    return "copy" if hasattr(os, "geteuid") and os.geteuid() == 0 else "symlink"


def _drop_write_bits(path: Path) -> None:
    mode = path.stat().st_mode
    path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def populate_inputs(
    task_dir: str | os.PathLike[str] | None,
    input_dir: str | os.PathLike[str],
    mode: InputMode = "auto",
) -> Literal["symlink", "copy", "bind"]:
    """Fill ``input_dir`` with read-only entries for every file under ``task_dir``.

    The directory tree is mirrored with real directories, so a script can never create or
    delete files inside the task's own folders through ``input/``. Each file is then either:

    * ``symlink``: a link to the task file, whose write bits are removed — a script running as
      an ordinary user cannot open it for writing;
    * ``copy``: a private read-only copy; chosen automatically when running as root, where
      permission bits protect nothing;
    * ``bind``: nothing is written; ``input/`` is the mount point of a sandbox's read-only bind.

    Finally every directory under ``input/`` loses its write bits. Returns the mode used.
    """
    target = Path(input_dir)
    target.mkdir(parents=True, exist_ok=True)
    chosen = _resolve_mode(mode)
    if task_dir is None or chosen == "bind":
        return chosen
    source_root = Path(task_dir).resolve()
    if not source_root.is_dir():
        raise FileNotFoundError(f"task data directory not found: {source_root}")
    made_dirs: list[Path] = [target]
    for dirpath, dirnames, filenames in os.walk(source_root):
        dirnames.sort()
        rel = Path(dirpath).relative_to(source_root)
        dest_dir = target / rel
        if dest_dir != target:
            dest_dir.mkdir(parents=True, exist_ok=True)
            made_dirs.append(dest_dir)
        for name in sorted(filenames):
            src = Path(dirpath) / name
            dest = dest_dir / name
            if chosen == "symlink":
                _drop_write_bits(src)
                dest.symlink_to(src)
            else:
                shutil.copyfile(src, dest)
                _drop_write_bits(dest)
    for directory in reversed(made_dirs):
        _drop_write_bits(directory)
    return chosen


def prepare_evaluation_directory(
    eval_dir: str | os.PathLike[str],
    task_data_dir: str | os.PathLike[str] | None,
    input_mode: InputMode = "auto",
) -> Path:
    """A fresh evaluation directory: reset if it exists (at-least-once effects re-run after a
    crash), ``input/`` holding the task data read-only, an empty ``final/``."""
    base = reset_directory(eval_dir)
    setup_working_directory(base)
    populate_inputs(task_data_dir, base / "input", input_mode)
    clean_output_directory(base)
    return base.resolve()
