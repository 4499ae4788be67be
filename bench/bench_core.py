"""Benchmarks of the event-sourced core (issue "Event-sourced core", Must show: benchmark).

    python bench/bench_core.py [--quick | --smoke]

(--smoke: tiny sizes, to check the bench runs; its timings judge nothing, so it exits 0 on a missed target)

1. durable appends/s, ours (SQLiteEventStore) vs plain sqlite3 doing the same inserts at the
   same durability (WAL, synchronous=FULL), single events and batches of 50; target ours/raw >= 0.5
2. folding 100,000 events (replay.state.fold) over envelopes read from the store; read and fold
   timed separately; target fold < 1 s
3. resume latency of a 10,000-event run: from the call to engine.run.lifecycle.drive() in a fresh
   process (imports done) to the first re-issued effect starting; target < 300 ms
4. replaying a 5,000-event log through the handlers (replay.verify) vs a plain fold (ratio)
"""

from __future__ import annotations

import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from events.base import NewEvent, canonical_json  # noqa: E402
from events.core import (  # noqa: E402
    AgentCallCompleted,
    AgentCallRequested,
    EvaluationCompleted,
    EvaluationRequested,
    Note,
    SolutionEvaluated,
    SolutionRecorded,
)
from events.domain import EvaluationResult  # noqa: E402
from replay.state import fold  # noqa: E402
from store.sqlite import SQLiteEventStore  # noqa: E402

STRATEGY = "bench.bench_strategy:main"
RESULTS: list[tuple[str, str, str, str]] = []  # (measure, ours, reference, verdict)


def row(measure: str, ours: str, reference: str = "", verdict: str = "") -> None:
    RESULTS.append((measure, ours, reference, verdict))
    print(f"  {measure}: {ours} {reference} {verdict}", file=sys.stderr, flush=True)


# --- 1. appends ---------------------------------------------------------------------------------

RAW_SCHEMA = """
CREATE TABLE runs(run_id TEXT PRIMARY KEY, head_seq INTEGER, head_hash TEXT);
CREATE TABLE events(run_id TEXT, seq INTEGER, type TEXT NOT NULL, version INTEGER NOT NULL, scope TEXT NOT NULL,
  causation_seq INTEGER, recorded_at TEXT NOT NULL, payload TEXT NOT NULL, prev_hash TEXT NOT NULL,
  hash TEXT NOT NULL, result_of TEXT, PRIMARY KEY (run_id, seq));
CREATE UNIQUE INDEX events_one_result ON events(run_id, result_of) WHERE result_of IS NOT NULL;
"""


def _note(i: int) -> NewEvent:
    return NewEvent(event=Note(level="info", message=f"event {i}", data={"i": i, "text": "x" * 200}), scope="bench")


def appends_per_second(store, batches: list[int]) -> float:
    """Durable appends/s of an event store (any backend) appending Notes to a new run 'B' in the
    given batch sizes; closes the store."""
    store.create_run("B", strategy="bench", task="bench")
    prepared, i = [], 0
    for size in batches:  # the caller's events exist before it appends (as raw's rows do)
        prepared.append([_note(i + k) for k in range(size)])
        i += size
    head = 0
    t0 = time.perf_counter()
    for batch in prepared:
        store.append("B", batch, expected_seq=head)
        head += len(batch)
    elapsed = time.perf_counter() - t0
    store.close()
    return head / elapsed


def _ours(path: Path, batches: list[int]) -> float:
    return appends_per_second(SQLiteEventStore(path), batches)  # defaults: WAL, synchronous=FULL


def raw_rows(batches: list[int]) -> list[list[tuple]]:
    """The rows a raw baseline inserts for run 'B': the same Note events, serialised beforehand."""
    rows, seq = [], 0
    for size in batches:
        batch = []
        for _ in range(size):
            seq += 1
            payload = canonical_json(_note(seq).event.payload())
            batch.append(("B", seq, "Note", 1, "bench", None, "2026-01-01T00:00:00.000000+00:00", payload,
                          "0" * 64, "f" * 64, None))
        rows.append(batch)
    return rows


def _raw(path: Path, batches: list[int]) -> float:
    """Plain sqlite3: the same rows (serialised beforehand), one transaction per batch."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.executescript(RAW_SCHEMA)
    conn.execute("INSERT INTO runs VALUES ('B', 0, '')")
    rows = raw_rows(batches)
    seq = sum(batches)
    t0 = time.perf_counter()
    for batch in rows:
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("INSERT INTO events VALUES (?,?,?,?,?,?,?,?,?,?,?)", batch)
        conn.execute("UPDATE runs SET head_seq=?, head_hash=? WHERE run_id='B'", (batch[-1][1], batch[-1][9]))
        conn.execute("COMMIT")
    elapsed = time.perf_counter() - t0
    conn.close()
    return seq / elapsed


def bench_appends(tmp: Path, single: int, batched: int, rounds: int = 3) -> None:
    for label, batches in (("durable single-event appends/s", [1] * single),
                           ("durable batched appends/s (50/batch)", [50] * (batched // 50))):
        ours, raw = [], []
        for r in range(rounds):  # interleaved, so both see the same disk and load
            ours.append(_ours(tmp / f"ours-{label[:12]}-{r}.db", batches))
            raw.append(_raw(tmp / f"raw-{label[:12]}-{r}.db", batches))
        o, w = statistics.median(ours), statistics.median(raw)
        ratio = o / w
        row(label, f"{o:,.0f} ev/s", f"raw sqlite3 {w:,.0f} ev/s; ratio ours/raw {ratio:.2f}",
            "OK (>= 0.5)" if ratio >= 0.5 else "MISSED (< 0.5)")


# --- 2. fold ------------------------------------------------------------------------------------


def _mixed(i: int) -> list[NewEvent]:
    """One 'cycle' of a realistic log: agent call, solution, evaluation, verdict, note (7 events)."""
    eid, sid = f"phase2/path-{i % 4}/t{i}/coder", f"sol{i:08d}"
    result = EvaluationResult(score=0.5 + (i % 100) / 1000, stdout="Final Validation Performance: 0.5\n" * 3,
                              stderr="", exit_code=0, duration_seconds=1.0, is_error=False)
    scope = f"phase2/path-{i % 4}"
    return [
        NewEvent(event=AgentCallRequested(effect_id=eid, agent_type="coder", prompt="p" * 400), scope=scope),
        NewEvent(event=AgentCallCompleted(effect_id=eid, text="t" * 300, code="print(1)\n" * 30, cost_usd=0.01,
                                          elapsed_s=float(i)), scope=scope),
        NewEvent(event=SolutionRecorded(solution_id=sid, content="import x\n" * 60, phase="refined",
                                        origin="coder", parents=[f"sol{i - 1:08d}"]), scope=scope),
        NewEvent(event=EvaluationRequested(effect_id=eid + "/eval", solution_id=sid, purpose="refine",
                                           timeout_s=600.0), scope=scope),
        NewEvent(event=EvaluationCompleted(effect_id=eid + "/eval", result=result, elapsed_s=float(i)), scope=scope),
        NewEvent(event=SolutionEvaluated(solution_id=sid, requested_solution_id=sid, score=result.score,
                                         is_executable=True, purpose="refine"), scope=scope),
        NewEvent(event=Note(level="info", message=f"step {i}"), scope=scope),
    ]


def build_big_run(path: Path, n_events: int) -> None:
    store = SQLiteEventStore(path, synchronous="OFF")  # setup only
    store.create_run("BIG", strategy="bench", task="bench")
    from events.core import RunStarted
    from events.domain import TaskDescription

    task = TaskDescription(competition_id="bench", task_type="regression", data_modality="tabular",
                           evaluation_metric="rmse", metric_direction="minimize", description="bench")
    head = len(store.append("BIG", [NewEvent(event=RunStarted(strategy="bench", backend="bench", seed=0, config={},
                                                              task=task, task_dir="/t", run_dir="/r"))], 0))
    i, batch = 0, []
    while head + len(batch) < n_events:
        batch.extend(_mixed(i)[: n_events - head - len(batch)])
        i += 1
        if len(batch) >= 1000 or head + len(batch) >= n_events:
            head += len(store.append("BIG", batch, head))
            batch = []
    store.close()


def bench_fold(tmp: Path, n_events: int, rounds: int = 3) -> None:
    path = tmp / "big.db"
    build_big_run(path, n_events)
    store = SQLiteEventStore(path, create=False)
    reads, folds, fold_cpu = [], [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        envs = list(store.read("BIG"))
        t1, c1 = time.perf_counter(), time.process_time()
        state = fold(envs)
        t2, c2 = time.perf_counter(), time.process_time()
        reads.append(t1 - t0)
        folds.append(t2 - t1)
        fold_cpu.append(c2 - c1)
    assert state.events == n_events, state.events
    store.close()
    r, f = min(reads), min(folds)
    # The target is on wall time; the CPU time beside it tells a slow fold from a shared machine.
    row(f"fold {n_events:,} events", f"fold {f * 1000:,.0f} ms", f"(CPU {min(fold_cpu) * 1000:,.0f} ms; "
        f"read from store {r * 1000:,.0f} ms; read+fold {(r + f) * 1000:,.0f} ms)",
        "OK (< 1 s)" if f < 1.0 else "MISSED (>= 1 s)")


# --- 3. resume latency --------------------------------------------------------------------------


def record_bench_run(db: Path, n_events: int) -> str:
    """Drive the bench strategy with a fast echo backend and stop it (SIGINT) after ~n_events."""
    from bench.bench_strategy import FastEcho
    from engine.run import lifecycle as runs
    from engine.run.lifecycle import PreparedTask
    from events.domain import PipelineConfig, TaskDescription

    task = TaskDescription(competition_id="bench", task_type="regression", data_modality="tabular",
                           evaluation_metric="rmse", metric_direction="minimize", description="bench")
    store = SQLiteEventStore(db, synchronous="OFF")  # setup only
    calls = (n_events - 4) // 2
    run_id = runs.create_run(store, db=db, task=PreparedTask(task, REPO / "tests" / "toy" / "task", "bench"),
                             strategy=STRATEGY, backend_name="bench.bench_strategy:FastEcho",
                             config=PipelineConfig(), seed=0, run_id="RESUME", params={"calls": calls + 10})
    state = runs.drive(store, run_id, backend=FastEcho(stop_after=calls))
    assert state.status == "stopped", state.status
    store.close()
    return run_id


RESUME_CHILD = r"""
import json, os, signal, sys, time
sys.path.insert(0, sys.argv[3])
import anyio
from engine.run import lifecycle as runs
from replay.state import fold
from replay.verify import verify
from handlers.runtime import Runtime
from engine.run.strategies import load_strategy
import bench.bench_strategy
db, run_id = sys.argv[1], sys.argv[2]
mark = {}

class FirstCall:
    name = "first-call"
    async def call(self, request, ctx):
        mark.setdefault("c1", time.process_time())
        mark.setdefault("t1", time.perf_counter())
        os.kill(os.getpid(), signal.SIGINT)
        await anyio.sleep(3600)

store = runs.open_store(runs.Path(db), create=False)
c0, t0 = time.process_time(), time.perf_counter()
runs.drive(store, run_id, backend=FirstCall())
latency, cpu = mark["t1"] - t0, mark["c1"] - c0
t = time.perf_counter(); envs = list(store.read(run_id)); read = time.perf_counter() - t
t = time.perf_counter(); fold(envs); fold_s = time.perf_counter() - t
main = load_strategy(envs[0].payload["strategy"])
t = time.perf_counter(); verify(envs, lambda: Runtime(main)); verify_s = time.perf_counter() - t
print(json.dumps({"latency": latency, "cpu": cpu, "events": len(envs), "read": read, "fold": fold_s, "verify": verify_s}))
"""


def bench_resume(tmp: Path, n_events: int, rounds: int = 3) -> None:
    runs_seen = []
    for r in range(rounds):
        db = tmp / f"resume-{r}" / "e.db"
        run_id = record_bench_run(db, n_events)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
        proc = subprocess.run([sys.executable, "-c", RESUME_CHILD, str(db), run_id, str(REPO)], env=env,
                              capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            raise SystemExit(f"resume child failed:\n{proc.stderr}")
        runs_seen.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    best = min(runs_seen, key=lambda x: x["latency"])
    ms = best["latency"] * 1000
    row(f"resume latency ({best['events']:,}-event run)", f"{ms:,.0f} ms",
        f"(CPU {best['cpu'] * 1000:,.0f} ms; "
        f"median of {rounds}: {statistics.median(x['latency'] for x in runs_seen) * 1000:,.0f} ms; "
        f"within: read {best['read'] * 1000:,.0f} ms, fold {best['fold'] * 1000:,.0f} ms, "
        f"replay-verify {best['verify'] * 1000:,.0f} ms per pass)", "OK (< 300 ms)" if ms < 300 else "MISSED (>= 300 ms)")


# --- 4. replay vs fold --------------------------------------------------------------------------


def bench_replay(tmp: Path, n_events: int, rounds: int = 3) -> None:
    from engine.run.strategies import load_strategy
    from handlers.runtime import Runtime
    from replay.verify import verify

    db = tmp / "replay" / "e.db"
    run_id = record_bench_run(db, n_events + 10)
    store = SQLiteEventStore(db, create=False)
    envs = list(store.read(run_id))
    cut = n_events
    while envs[cut - 1].kind != "decision":  # end on a decision, so the last input's reactions are in
        cut += 1
    envs = envs[:cut]
    store.close()
    main = load_strategy(STRATEGY)
    replays, folds = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        divergence, _ = verify(envs, lambda: Runtime(main))
        t1 = time.perf_counter()
        fold(envs)
        t2 = time.perf_counter()
        assert divergence is None, divergence.describe()
        replays.append(t1 - t0)
        folds.append(t2 - t1)
    rp, fd = min(replays), min(folds)
    row(f"replay.verify of {len(envs):,} events", f"{rp * 1000:,.0f} ms",
        f"(plain fold {fd * 1000:,.1f} ms; replay/fold ratio {rp / fd:,.0f}x)")


# Events per measure; --quick for a look, --smoke for the test that checks every bench still runs.
SIZES = {
    "full": {"single": 400, "batched": 5000, "fold": 100_000, "resume": 10_000, "replay": 5_000, "rounds": 3,
             "resume_rounds": 3},
    "quick": {"single": 100, "batched": 1000, "fold": 20_000, "resume": 2_000, "replay": 1_000, "rounds": 3,
              "resume_rounds": 1},
    "smoke": {"single": 20, "batched": 100, "fold": 2_000, "resume": 300, "replay": 200, "rounds": 1,
              "resume_rounds": 1},
}


def main(argv: list[str]) -> int:
    import logging

    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.ERROR))  # quiet drivers
    smoke = "--smoke" in argv
    size = SIZES["smoke" if smoke else "quick" if "--quick" in argv else "full"]
    with tempfile.TemporaryDirectory(prefix="bench-core-", dir=os.environ.get("BENCH_TMPDIR")) as d:
        tmp = Path(d)
        print("benchmarking the event-sourced core (progress on stderr) …", file=sys.stderr)
        bench_appends(tmp, single=size["single"], batched=size["batched"], rounds=size["rounds"])
        bench_fold(tmp, size["fold"], rounds=size["rounds"])
        bench_resume(tmp, size["resume"], rounds=size["resume_rounds"])
        bench_replay(tmp, size["replay"], rounds=size["rounds"])
    width = [max(len(r[i]) for r in RESULTS + [("measure", "ours", "reference", "target")]) for i in range(4)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, width))
    print(line(("measure", "ours", "reference", "target")))
    print(line(tuple("-" * w for w in width)))
    for r in RESULTS:
        print(line(r))
    return 1 if not smoke and any(r[3].startswith("MISSED") for r in RESULTS) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
