"""PostgreSQL event store vs raw psycopg inserts (issue 17, Must show: benchmark).

    python bench/bench_postgres.py [--quick | --smoke]

(--smoke: a few dozen events, to check the bench runs)

Durable appends/s of ``PostgresEventStore`` (optimistic check, hash chain, one transaction per
append) against plain psycopg doing the same rows at the same durability (synchronous_commit=on,
fsync on) and the same batch: single events and batches of 50. Both run on one throwaway local
server ($ENGINE_TEST_POSTGRES_URL when set), interleaved round by round so both see the same disk
and load; the figure is the median ratio ours/raw (target >= 0.5, as for SQLite in bench_core).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.bench_core import appends_per_second, raw_rows  # noqa: E402  (the same Note events)

RAW_SCHEMA = """
CREATE TABLE runs(run_id TEXT PRIMARY KEY, head_seq BIGINT, head_hash TEXT);
CREATE TABLE events(run_id TEXT, seq BIGINT, type TEXT NOT NULL, version INTEGER NOT NULL, scope TEXT NOT NULL,
  causation_seq BIGINT, recorded_at TEXT NOT NULL, payload TEXT NOT NULL, prev_hash TEXT NOT NULL,
  hash TEXT NOT NULL, result_of TEXT, PRIMARY KEY (run_id, seq));
CREATE UNIQUE INDEX events_one_result ON events(run_id, result_of) WHERE result_of IS NOT NULL;
"""


@contextlib.contextmanager
def server() -> Iterator[str]:
    given = os.environ.get("ENGINE_TEST_POSTGRES_URL", "").strip()
    if given:
        yield given
        return
    from store.pg_local import LocalPostgres

    with LocalPostgres(fsync=True) as local:  # fsync on: the durability being compared
        yield local.url


def _ours(url: str, schema: str, batches: list[int]) -> float:
    from store.postgres import PostgresEventStore

    return appends_per_second(PostgresEventStore(url, schema=schema, synchronous_commit="on"), batches)


def _raw(url: str, schema: str, batches: list[int]) -> float:
    """Plain psycopg: the same rows (serialised beforehand), one transaction per batch."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
        conn.execute(f"SET search_path TO {schema}")
        conn.execute("SET synchronous_commit = on")
        conn.execute(RAW_SCHEMA)
        conn.execute("INSERT INTO runs VALUES ('B', 0, '')")
        rows, seq = raw_rows(batches), sum(batches)
        t0 = time.perf_counter()
        for batch in rows:
            with conn.transaction(), conn.cursor() as cur:
                cur.executemany("INSERT INTO events VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)", batch)
                cur.execute("UPDATE runs SET head_seq=%s, head_hash=%s WHERE run_id='B'", (batch[-1][1], batch[-1][9]))
        elapsed = time.perf_counter() - t0
    return seq / elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer events")
    parser.add_argument("--smoke", action="store_true", help="a few dozen events")
    args = parser.parse_args()
    single, batched, rounds = (20, 100, 1) if args.smoke else (100, 1000, 1) if args.quick else (1000, 10000, 3)
    print("PostgreSQL event store vs raw psycopg (same server, same durability)")
    missed = False
    with server() as url:
        for label, batches in (("durable single-event appends/s", [1] * single),
                               ("durable batched appends/s (50/batch)", [50] * (batched // 50))):
            ours, raw = [], []
            for r in range(rounds):  # interleaved
                tag = f"{'s' if batches[0] == 1 else 'b'}{r}_{os.getpid()}"
                ours.append(_ours(url, f"ours_{tag}", batches))
                raw.append(_raw(url, f"raw_{tag}", batches))
            o, w = statistics.median(ours), statistics.median(raw)
            ratio = o / w
            verdict = "OK (>= 0.5)" if ratio >= 0.5 else "MISSED (< 0.5)"
            missed = missed or ratio < 0.5
            print(f"  {label}: ours {o:,.0f} ev/s, raw psycopg {w:,.0f} ev/s; ratio ours/raw {ratio:.2f} {verdict}")
    return 1 if missed and not args.smoke else 0


if __name__ == "__main__":
    sys.exit(main())
