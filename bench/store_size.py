"""What a SQLite event store holds, measured the same way for any engine version (issue 63, "the
`make demo` run's store at least 10x smaller"): the bytes of every stored payload (by event type),
of the artifact tables when there are any, and the file's size after VACUUM. It reads a copy made
with SQLite's backup API (the WAL's pages included), so the measured file is left as it is.

    python -m bench.store_size engine-runs/demo.db
"""

from __future__ import annotations

import collections
import os
import sqlite3
import sys
import tempfile
from pathlib import Path


def measure(db: Path) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "copy.db"
        source, target = sqlite3.connect(db), sqlite3.connect(copy)
        try:
            source.backup(target)
        finally:
            source.close()
        try:
            by_type: collections.Counter[str] = collections.Counter()
            for typ, size in target.execute("SELECT type, length(CAST(payload AS BLOB)) FROM events"):
                by_type[typ] += size
            tables = {r[0] for r in target.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            artifacts = 0
            if "artifacts" in tables:
                artifacts = sum(r[0] for r in target.execute(
                    "SELECT length(CAST(digest AS BLOB)) + 8 + length(chunks) FROM artifacts"))
                artifacts += sum(r[0] for r in target.execute(
                    "SELECT length(key) + length(data) FROM artifact_chunks"))
            target.execute("VACUUM")
        finally:
            target.close()
        return {"payload_bytes": sum(by_type.values()), "artifact_bytes": artifacts,
                "stored_bytes": sum(by_type.values()) + artifacts, "file_bytes_after_vacuum": os.path.getsize(copy),
                "payload_bytes_by_type": dict(by_type.most_common())}


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not Path(argv[0]).is_file():
        print("usage: python -m bench.store_size DB.sqlite (an existing engine database)", file=sys.stderr)
        return 2
    result = measure(Path(argv[0]))
    for key, value in result.items():
        if key != "payload_bytes_by_type":
            print(f"{key}: {value}")
    for typ, size in list(result["payload_bytes_by_type"].items())[:5]:  # type: ignore[attr-defined]
        print(f"  {typ}: {size}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
