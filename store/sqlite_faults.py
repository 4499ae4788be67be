"""Naming what went wrong under a SQLite database: every sqlite3 (or OS) error leaves the store as
one StoreError whose message says what happened and what to do, never as a raw sqlite3 error; and
the one lock SQLite refuses without waiting for it, which is waited for here (``into_wal``)."""

from __future__ import annotations

import errno
import os
import resource
import shlex
import sqlite3
import time
from pathlib import Path

from store.base import (
    DatabaseLocked,
    NotAnEngineDatabase,
    StorageDamaged,
    StorageDenied,
    StorageFault,
    StorageFull,
    StorageReadOnly,
    StoreError,
)

# Primary result codes (the low byte of an extended code), as sqlite3.h numbers them.
_PERM, _BUSY, _LOCKED, _READONLY, _IOERR, _CORRUPT, _FULL, _CANTOPEN, _NOTADB = 3, 5, 6, 8, 10, 11, 13, 14, 26


def on_read_only_fs(path: Path) -> bool:
    try:
        return bool(os.statvfs(path if path.exists() else path.parent).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _may_write(path: Path) -> bool:
    """False when this process lacks write permission on the file or, for a file not there yet
    or its WAL/-shm companions, on its directory."""
    return os.access(path.parent, os.W_OK | os.X_OK) and (not path.exists() or os.access(path, os.W_OK))


def _file_size_limited() -> bool:
    """Writes past RLIMIT_FSIZE fail with EFBIG, which SQLite reports as a plain I/O error."""
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    return soft != resource.RLIM_INFINITY


def _again(run_id: str | None) -> str:
    return (f"`engine resume {shlex.quote(run_id)}` continues the run where it stopped" if run_id
            else "run the command again")


def translate(exc: sqlite3.Error | OSError, path: Path, run_id: str | None = None) -> StoreError:
    """The named store error for ``exc`` met while using the database at ``path``
    (``run_id``: the run being written, for the advice on how to continue)."""
    if isinstance(exc, OSError):
        return _os_error(exc, path, run_id)
    text = str(exc)
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    if code in (_BUSY, _LOCKED) or "locked" in text or "busy" in text:
        return DatabaseLocked(f"{path} is locked by another process ({text}); try again shortly")
    if code == _NOTADB or "not a database" in text or "file is encrypted" in text:
        return NotAnEngineDatabase(
            f"{path} is not an engine database (not even SQLite: {text}); pass --db with the right file, "
            "or, if it is the right one, its header is damaged: restore it from a copy")
    if code == _FULL or "database or disk is full" in text:
        return StorageFull(f"disk full: {path} could not be written ({text}); free space on its file system, "
                           f"then {_again(run_id)}")
    if code == _CORRUPT or "malformed" in text:
        where = f" (reading run {run_id})" if run_id else ""
        return StorageDamaged(
            f"{path} is damaged ({text}){where}; `engine verify` lists which runs still read whole, "
            "`engine export RUN -o FILE` saves each of those, or restore the file from a copy")
    if code in (_READONLY, _CANTOPEN, _PERM) or "readonly" in text:
        if on_read_only_fs(path):
            return StorageReadOnly(f"{path} is on a read-only file system ({text}); remount it read-write "
                                   f"or pass --db with a writable copy, then {_again(run_id)}")
        if not _may_write(path) or code == _PERM:
            return StorageDenied(f"permission denied: this user may not write {path} or its directory ({text}); "
                                 f"fix the permissions or pass --db with a file you own, then {_again(run_id)}")
        if code == _READONLY:
            return StorageReadOnly(f"{path} is read-only ({text}); make it writable, then {_again(run_id)}")
    if code == _IOERR and _file_size_limited():
        return StorageFull(f"file size limit: {path} could not grow past this process's limit ({text}; "
                           f"`ulimit -f`); raise the limit, then {_again(run_id)}")
    if code == _IOERR:
        return StorageFault(f"disk I/O error on {path} ({text}); check the disk (space, quota, file size "
                            f"limit, hardware), then {_again(run_id)}")
    return StoreError(f"{path}: {text}")


def _os_error(exc: OSError, path: Path, run_id: str | None) -> StoreError:
    reason = exc.strerror or str(exc)
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return StorageFull(f"disk full: {path} could not be written ({reason}); free space on its file system, "
                           f"then {_again(run_id)}")
    if exc.errno == errno.EROFS:
        return StorageReadOnly(f"{path} is on a read-only file system ({reason}); remount it read-write "
                               f"or pass --db with a writable copy, then {_again(run_id)}")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return StorageDenied(f"permission denied: {exc.filename or path} ({reason}); fix the permissions or "
                             f"pass --db with a file you own, then {_again(run_id)}")
    return StoreError(f"{path}: {reason}")


def into_wal(conn: sqlite3.Connection, timeout_s: float) -> None:
    """Put the file in WAL mode. Switching a new file can be refused at once while another process
    creates it (SQLite does not wait where waiting could deadlock, so the busy timeout is not used):
    the switch is tried again, within the same bound, before the lock is named."""
    give_up = time.monotonic() + timeout_s
    pause = 0.005
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() + pause > give_up:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.2)
