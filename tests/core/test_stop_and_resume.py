"""Stopping a driver and resuming it (issue "Event-sourced core", Must show: run leases — two
`engine resume` at once, exactly one drives; SIGINT/SIGTERM records DriverStopped and the run
resumes; elapsed time counts only driven time). Real subprocesses, real signals."""

from __future__ import annotations

import json
import signal
import socket
import time
from pathlib import Path

from replay.state import fold
from store.sqlite import SQLiteEventStore
from tests.core.helpers import (
    SLOW_AGENT,
    assert_no_traceback,
    engine_env,
    popen_engine,
    read_log,
    run_engine,
    send_signal_when,
    start_toy,
)


def _start_and_stop(db: Path, signum: int) -> tuple[int, str]:
    """Start the slow toy run, signal it once 3 results are committed; return (rc, stdout)."""
    proc = popen_engine(*start_toy(db, "R", agent=SLOW_AGENT), env=engine_env(TOY_DELAY_S="0.4"))
    send_signal_when(proc, db, "R", results=3, signum=signum)
    stdout, stderr = proc.communicate(timeout=60)
    assert "Traceback" not in stderr, stderr
    return proc.returncode, stdout


def _assert_gap_free_and_sealed(db: Path) -> list:
    log = read_log(db, "R")
    seqs = [e.seq for e in log]
    assert seqs == list(range(1, len(log) + 1))
    store = SQLiteEventStore(db, create=False)
    assert store.verify_chain("R") is None
    store.close()
    return log


def test_two_resumes_at_once_exactly_one_drives(tmp_path: Path) -> None:
    db = tmp_path / "e.db"
    rc, _ = _start_and_stop(db, signal.SIGINT)
    assert rc == 1
    stopped = read_log(db, "R")
    assert stopped[-1].type == "DriverStopped" and stopped[-1].payload["reason"] == "signal SIGINT"
    assert fold(stopped).status == "stopped"

    env = engine_env(TOY_DELAY_S="1.0")  # the winner drives for several seconds
    procs = [popen_engine("resume", "R", "--db", db, env=env) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    codes = [p.returncode for p in procs]
    assert sorted(codes) == [0, 2], (codes, outs)
    winner = procs[codes.index(0)]
    loser_err = outs[codes.index(2)][1]
    assert f"process {winner.pid} on host {socket.gethostname()}" in loser_err, loser_err
    assert "Traceback" not in loser_err and "Traceback" not in outs[codes.index(0)][1]

    log = _assert_gap_free_and_sealed(db)
    assert log[-1].type == "RunCompleted"
    starts = [e for e in log if e.type == "DriverStarted"]
    assert [s.payload["pid"] for s in starts[1:]] == [winner.pid]  # the loser appended nothing
    effect_results = [e.payload["effect_id"] for e in log if e.type == "AgentCallCompleted"]
    assert len(effect_results) == len(set(effect_results)) == 11


def test_sigterm_records_stop_and_resume_counts_only_driven_time(tmp_path: Path) -> None:
    db = tmp_path / "e.db"
    t0 = time.monotonic()
    rc, stdout = _start_and_stop(db, signal.SIGTERM)
    assert rc == 1 and "resume with: engine resume R" in stdout.replace("\n", " ")
    stopped_log = read_log(db, "R")
    stop = stopped_log[-1]
    assert stop.type == "DriverStopped" and stop.payload["reason"] == "signal SIGTERM"
    assert stop.payload["cancelled_effects"], "effects in flight at the stop are named"
    status = run_engine("status", "R", "--json", "--db", db)
    assert status.returncode == 0 and json.loads(status.stdout)["status"] == "stopped"

    time.sleep(2.0)  # downtime: must not count as run time
    r0 = time.monotonic()
    resumed = run_engine("resume", "R", "--db", db, env=engine_env(TOY_DELAY_S="0.05"))
    resume_wall = time.monotonic() - r0
    total_wall = time.monotonic() - t0
    assert resumed.returncode == 0, resumed.stderr
    assert_no_traceback(resumed)

    log = _assert_gap_free_and_sealed(db)
    state = fold(log)
    assert state.status == "completed"
    restart = [e for e in log if e.type == "DriverStarted"][-1]
    assert restart.payload["resumed"] is True
    assert abs(restart.payload["elapsed_s"] - stop.payload["elapsed_s"]) < 1e-6
    assert state.elapsed_seconds - stop.payload["elapsed_s"] <= resume_wall
    assert state.elapsed_seconds <= total_wall - 2.0
    # the effects that were in flight at the stop ran again and got exactly one result each
    done = [e.payload["effect_id"] for e in log if e.type == "AgentCallCompleted"]
    assert set(stop.payload["cancelled_effects"]) <= set(done) and len(done) == len(set(done))
