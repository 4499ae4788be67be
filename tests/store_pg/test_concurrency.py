"""Concurrency on PostgreSQL (issue 17, Must show: "8 processes appending to 8 runs and 2 drivers
racing for one run → 0 lost or duplicated events, every chain verifies, exactly one driver holds
the lease"). Real processes, a real server."""

from __future__ import annotations

import multiprocessing
import socket
import time
from pathlib import Path

from store.base import ConcurrencyError, RunNotFound
from store.postgres import PostgresEventStore
from tests.core.helpers import SLOW_AGENT, engine_env, popen_engine, start_toy
from tests.core.store_contract import note
from tests.store_pg.server import database_name, fresh_database, schema_for

RUNS = [f"R{i}" for i in range(8)]
PER_RUN = 8  # events each process appends to each run


def _appender(url: str, schema: str, tag: int, start) -> None:
    """Append PER_RUN events to every run, in batches of 1-3, round-robin, retrying stale heads."""
    store = PostgresEventStore(url, schema=schema)
    start.wait()
    done = dict.fromkeys(RUNS, 0)
    turn = tag
    while any(n < PER_RUN for n in done.values()):
        run = RUNS[turn % len(RUNS)]
        turn += 1
        if done[run] >= PER_RUN:
            continue
        size = min(1 + (turn % 3), PER_RUN - done[run])
        batch = [note(done[run] + k, scope=f"p{tag}") for k in range(size)]
        while True:
            try:
                store.append(run, batch, expected_seq=store.last_seq(run))
                break
            except ConcurrencyError:
                continue
        done[run] += size
    store.close()


def test_eight_processes_appending_to_eight_runs(pg_url: str, tmp_path: Path) -> None:
    schema = schema_for(tmp_path)
    store = PostgresEventStore(pg_url, schema=schema)
    for run in RUNS:
        store.create_run(run, strategy="toy", task="toy")
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Event()
    procs = [ctx.Process(target=_appender, args=(pg_url, schema, tag, start)) for tag in range(8)]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(180)
        assert p.exitcode == 0
    for run in RUNS:
        log = list(store.read(run))
        assert [e.seq for e in log] == list(range(1, 8 * PER_RUN + 1))  # nothing lost, no gap
        for tag in range(8):  # every process's events exactly once, in its own order
            assert [e.payload["data"]["i"] for e in log if e.scope == f"p{tag}"] == list(range(PER_RUN))
        assert store.verify_chain(run) is None
    store.close()


def _results_committed(store: PostgresEventStore, run_id: str) -> int:
    try:
        return sum(1 for e in store.read(run_id) if e.type == "AgentCallCompleted")
    except RunNotFound:  # the driver has not created the run yet
        return 0


def test_two_drivers_racing_for_one_run(pg_url: str, tmp_path: Path) -> None:
    url = fresh_database(pg_url, database_name(tmp_path))
    env = engine_env(TOY_DELAY_S="0.4", ENGINE_RUNS_DIR=str(tmp_path / "runs"))
    first = popen_engine(*start_toy(url, "R", agent=SLOW_AGENT), env=env)  # type: ignore[arg-type]
    store = PostgresEventStore(url)
    deadline = time.monotonic() + 300  # generous: a loaded 2-core machine starts `engine` slowly
    while _results_committed(store, "R") < 3 and time.monotonic() < deadline:
        assert first.poll() is None, first.communicate()
        time.sleep(0.1)
    first.send_signal(2)  # SIGINT: the driver records DriverStopped and exits
    first.communicate(timeout=60)
    assert list(store.read("R"))[-1].type == "DriverStopped"

    env = engine_env(TOY_DELAY_S="1.0", ENGINE_RUNS_DIR=str(tmp_path / "runs"))
    procs = [popen_engine("resume", "R", "--db", url, env=env) for _ in range(2)]
    holders = set()
    while any(p.poll() is None for p in procs):  # while they race: never two lease holders
        rows = store.conn.execute("SELECT pid, host FROM leases WHERE run_id='R'").fetchall()
        assert len(rows) <= 1
        holders.update(rows)
        time.sleep(0.05)
    outs = [p.communicate(timeout=120) for p in procs]
    codes = [p.returncode for p in procs]
    assert sorted(codes) == [0, 2], (codes, outs)
    winner = procs[codes.index(0)]
    assert f"process {winner.pid} on host {socket.gethostname()}" in outs[codes.index(2)][1]
    assert holders == {(winner.pid, socket.gethostname())}

    log = list(store.read("R"))
    assert [e.seq for e in log] == list(range(1, len(log) + 1))
    assert log[-1].type == "RunCompleted" and store.verify_chain("R") is None
    starts = [e.payload["pid"] for e in log if e.type == "DriverStarted"]
    assert starts[1:] == [winner.pid]  # the loser appended nothing
    results = [e.payload["effect_id"] for e in log if e.type == "AgentCallCompleted"]
    assert len(results) == len(set(results)) == 11
    store.close()
