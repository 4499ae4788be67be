"""Reading a SQLite file's stored rows for the chain check: text columns read as bytes and decoded
here, so that a tampered byte leaving invalid UTF-8 is named by its seq, and the last seq read is
known when a damaged page stops the read."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator

from store.chain import StoredRow


class ReadUpTo:
    """A cursor's rows, remembering the last seq read (where a damaged file stopped reading)."""

    def __init__(self, last_seq: int = 0) -> None:
        self.cur: sqlite3.Cursor | None = None
        self.last_seq = last_seq

    def __iter__(self) -> Iterator[tuple]:
        assert self.cur is not None, "the query runs before the rows are read"
        for row in self.cur:
            self.last_seq = row[0]
            yield row


class NotUtf8(Exception):
    def __init__(self, seq: int) -> None:
        self.seq = seq


def decoded(rows: Iterable[tuple]) -> Iterator[StoredRow]:
    for seq, typ, version, scope, cause, recorded_at, *texts in rows:
        try:
            typ, scope, recorded_at, *texts = (None if b is None else bytes(b).decode("utf-8")
                                               for b in (typ, scope, recorded_at, *texts))
        except UnicodeDecodeError:
            raise NotUtf8(seq) from None
        yield (seq, typ, version, scope, cause, recorded_at, *texts)
