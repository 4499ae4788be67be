"""Benchmark: a simulated 24-hour run (issue 63), on SQLite and PostgreSQL, at 1 h, 6 h, the last
commit before the run ends (a resume's last chance: the run ends before its limit) and 24 h.

    python bench/bench_longrun.py [--smoke] [--out bench/results] [--name longrun-<date>]

(--smoke: a simulated 2-hour run measured at 1 h and 2 h, exit 0 whatever the figures;
the full size exits 1 when a target is missed)

MLE-STAR and ``evolve`` are driven on the simulated clock of the time-plan property test
(``tests.support.sim.simulate_clock``: every agent call and evaluation takes a time drawn per
effect, a few far longer, an evaluation longer than its timeout is killed there) by the scripted
worlds of the handler tests, whose answers are padded to a realistic size: every whole script an
agent writes is 5-30 KB, every evaluation prints a few KB. The log is appended to each store one
input and its decisions per transaction, as the driver commits, and a projection snapshot is
written as the driver writes one (``engine.run.snapshots.save_at_boundary``). When the run's
clock passes each point, the bench measures the store as it is then:

* events and stored bytes (each run has a store of its own: the SQLite file, or the PostgreSQL
  tables with their indexes and TOAST), against the same run appended to a second store in the
  format before artifacts (every payload whole in its row) and without snapshots;
* resume: in a fresh process, open the store, check the chain, then ``engine.run.rebuild.quick_state``
  — what the driver does before a resume's pending effects run again: the fold from the last
  snapshot and the events after it — wall and CPU time; then the check the driver runs beside those
  effects, ``engine.run.rebuild.rebuild`` (read the log once, fold it and rebuild the handlers by
  feeding them every recorded input, ``replay.verify``), and the process's peak RSS; the check's
  parts (read, fold, the handlers' replay) are timed again apart after it;
* ``engine status``: in a fresh process, the fold from the last snapshot, against today's fold of
  the whole log (the ratio);
* the UI: ``engine ui`` started on the store; the runs list once the server is up, then the first
  render of the run's page.

Targets (issue 63): resume < 100 ms, status < 100 ms, run page < 1 s at every point. Results go to
``bench/results/<name>.json`` and ``.md``, ``longrun-<date>`` unless ``--name`` (not under --smoke).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.longrun_world import Batch, SimulatedRun, simulate_day  # noqa: E402
from replay.state import PipelineState  # noqa: E402

TARGETS_S = {"resume": 0.1, "status": 0.1, "run_page": 1.0}
ENV = {**os.environ, "PYTHONPATH": str(REPO), "ENGINE_LOG_LEVEL": "WARNING"}
# size -> (simulated time limit in s, the points measured in hours); the smoke run measures two
# points, enough to show a store measured, filled further and measured again
SIZES: dict[str, tuple[int, tuple[float, ...]]] = {"full": (86_400, (1.0, 6.0, 24.0)),
                                                   "smoke": (7_200, (1.0, 2.0))}


# --- the store, filled as the driver fills it -----------------------------------------------------


@dataclass
class Filling:
    """A run appended to one store as the driver appends it: one transaction per batch, and (in
    today's build) a snapshot as a commit crosses every ``SNAPSHOT_EVERY`` events."""

    store: Any
    run_id: str
    snapshots: bool = True
    state: PipelineState = field(default_factory=PipelineState)
    done: int = 0

    def until(self, batches: list[Batch], upto_s: float) -> None:
        """Append the batches whose input arrived by ``upto_s``."""
        from engine.run.snapshots import save_at_boundary

        while self.done < len(batches) and batches[self.done].at_s <= upto_s:
            batch = batches[self.done]
            for env in self.store.append(self.run_id, batch.events, expected_seq=self.state.last_seq):
                self.state.apply(env)
            if self.snapshots:
                save_at_boundary(self.store, self.run_id, self.state, len(batch.events))
            self.done += 1


@contextmanager
def inline_payloads() -> Iterator[None]:
    """The format before artifacts: every string of a payload whole in its event's row
    (store/artifacts.py externalises none longer than MIN_BYTES, which is raised out of reach)."""
    import store.artifacts as artifacts

    saved = artifacts.MIN_BYTES
    artifacts.MIN_BYTES = sys.maxsize
    try:
        yield
    finally:
        artifacts.MIN_BYTES = saved


def stored_bytes(store: Any) -> tuple[int, int]:
    """(the whole database, its snapshots table) in bytes."""
    if hasattr(store.conn, "execute") and store.__class__.__name__.startswith("SQLite"):
        conn = store.conn
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        total = conn.execute("PRAGMA page_count").fetchone()[0] * conn.execute("PRAGMA page_size").fetchone()[0]
        snaps = conn.execute("SELECT name FROM sqlite_master WHERE name='snapshots'").fetchall()
        part = conn.execute("SELECT COALESCE(SUM(pgsize), 0) FROM dbstat WHERE name='snapshots'").fetchone()[0] \
            if snaps and _has_dbstat(conn) else 0
        return int(total), int(part)
    row = store.conn.execute(  # every table of the engine's schema, with its indexes and TOAST
        "SELECT COALESCE(SUM(pg_total_relation_size(format('%I.%I', table_schema, table_name))), 0), "
        "COALESCE(SUM(pg_total_relation_size(format('%I.%I', table_schema, table_name))) "
        "FILTER (WHERE table_name = 'snapshots'), 0) "
        "FROM information_schema.tables WHERE table_schema = current_schema()").fetchone()
    return int(row[0]), int(row[1])


def _has_dbstat(conn: Any) -> bool:
    try:
        conn.execute("SELECT 1 FROM dbstat LIMIT 1")
    except Exception:  # SQLite built without the dbstat table: the snapshots' JSON length instead
        return False
    return True


# --- the measurements, each in a fresh process ------------------------------------------------------


RESUME_CHILD = r"""
import json, sys, time
db, run_id, strategy = sys.argv[1], sys.argv[2], sys.argv[3]

def peak_rss_mb():
    # VmHWM, this process's own high-water mark (getrusage's ru_maxrss survives exec: it would
    # report the bench's own memory when that was larger)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")

from engine.run import lifecycle as runs
from engine.run import collector
from engine.run import rebuild as resume
from replay.state import fold
from replay.verify import verify
if strategy == "mle-star":
    from handlers.mlestar.pipeline import main
else:
    from handlers.evolution import main
if db.startswith("postgres"):
    import store.postgres  # imported by open_store for a server: an import, excluded like the others
t_imports = time.perf_counter()
cpu_imports = time.process_time()
store = runs.open_store(runs.DatabaseUrl(db) if db.startswith("postgres") else runs.Path(db), create=False)
problem = store.check_chain(run_id)
t_open = time.perf_counter()
quick = resume.quick_state(store, run_id)  # what Driver._load does: the fold its effects start from
t_effects = time.perf_counter()
cpu_resume = time.process_time() - cpu_imports
rebuilt = resume.rebuild(store, run_id, main)  # the check the driver runs beside the effects
t_check = time.perf_counter()
cpu_check = time.process_time() - cpu_imports - cpu_resume
assert problem is None and rebuilt.divergence is None, (problem, rebuilt.divergence)
assert quick.pending == rebuilt.state.pending and quick.summary() == rebuilt.state.summary()
# the check's parts, timed apart afterwards (the GC paused as rebuild pauses it)
with collector.gc_paused():
    t = time.perf_counter(); envelopes = resume.read_for_resume(store, run_id); read_s = time.perf_counter() - t
    t = time.perf_counter(); fold(envelopes); fold_s = time.perf_counter() - t
    t = time.perf_counter(); verify(envelopes, lambda: resume.Runtime(main)); replay_s = time.perf_counter() - t
print(json.dumps({"resume_s": t_effects - t_imports, "resume_cpu_s": cpu_resume, "open_s": t_open - t_imports,
                  "check_s": t_check - t_effects, "check_cpu_s": cpu_check, "read_s": read_s,
                  "fold_s": fold_s, "rebuild_s": replay_s, "events": rebuilt.state.events,
                  "pending": sorted(p.type for p in quick.pending.values()), "peak_rss_mb": peak_rss_mb()}))
"""

STATUS_CHILD = r"""
import json, sys, time
db, run_id = sys.argv[1], sys.argv[2]
from engine.run import lifecycle as runs
from engine.run.snapshots import state_of
from replay.state import fold
store = runs.open_store(runs.DatabaseUrl(db) if db.startswith("postgres") else runs.Path(db), create=False)
t = time.perf_counter(); c = time.process_time(); snap = state_of(store, run_id).summary()
status_s, status_cpu_s = time.perf_counter() - t, time.process_time() - c
t = time.perf_counter(); whole = fold(store.read(run_id)).summary(); today_s = time.perf_counter() - t
assert snap == whole
print(json.dumps({"status_s": status_s, "status_cpu_s": status_cpu_s, "status_today_s": today_s}))
"""


def child(code: str, *args: str) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-c", code, *args], env=ENV, cwd=REPO, capture_output=True, text=True,
                          timeout=1800)
    if proc.returncode != 0:
        raise SystemExit(f"measurement failed:\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def ui_times(db: str, run_id: str) -> dict[str, float]:
    """The runs list once ``engine ui`` is up, and the first render of the run's page."""
    import psutil

    proc = subprocess.Popen([sys.executable, "-m", "engine.cli", "ui", "--db", db, "--port", "0"],
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=ENV, cwd=REPO)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        found = re.search(r"serving (http://\S+)", line)
        if found is None:
            raise SystemExit(f"engine ui did not start: {line}{proc.stderr.read()[-2000:]}")
        url = found.group(1)
        t = time.perf_counter()
        fetch(url)
        runs_list = time.perf_counter() - t
        server = psutil.Process(proc.pid)
        t, c = time.perf_counter(), sum(server.cpu_times()[:2])
        fetch(url + f"run/{run_id}")
        return {"runs_list_s": runs_list, "run_page_s": time.perf_counter() - t,
                "run_page_cpu_s": sum(server.cpu_times()[:2]) - c}  # the server's CPU (user + system)
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def fetch(url: str) -> None:
    with urllib.request.urlopen(url, timeout=600) as response:
        response.read()


def measure(db: str, store: Any, sim: SimulatedRun, strategy: str) -> dict[str, Any]:
    total, snaps = stored_bytes(store)
    snap_json = _snapshot_json(store, sim.run_id)
    resume = child(RESUME_CHILD, db, sim.run_id, strategy)
    status = child(STATUS_CHILD, db, sim.run_id)
    return {"events": resume["events"], "stored_bytes": total, "snapshot_bytes": snaps or snap_json,
            **resume, **status, **ui_times(db, sim.run_id)}


def _snapshot_json(store: Any, run_id: str) -> int:
    from store.snapshots import table_of

    table = table_of(store)
    return table.stored_bytes(run_id) if table is not None else 0


# --- the run ------------------------------------------------------------------------------------------


def bench_run(label: str, dbs: tuple[str, str], open_store: Callable[[str], Any], strategy: str,
              sim: SimulatedRun, points_h: tuple[float, ...]) -> list[dict[str, Any]]:
    """One run in a store of its own (its bytes are its own), measured at each point; the same run
    in a second store in the format before artifacts and snapshots, for its size."""
    db, before_db = dbs
    now, before = Filling(open_store(db), sim.run_id), Filling(open_store(before_db), sim.run_id, snapshots=False)
    with inline_payloads():
        before.store.create_run(sim.run_id, strategy=strategy, task="sim-task")
    now.store.create_run(sim.run_id, strategy=strategy, task="sim-task")
    rows = []
    for hours in sorted({*points_h, last_in_flight_h(sim)}):
        now.until(sim.batches, hours * 3600)
        with inline_payloads():
            before.until(sim.batches, hours * 3600)
        row = {"backend": label, "strategy": strategy, "hours": hours, "stored_bytes_before": stored_bytes(before.store)[0],
               **measure(db, now.store, sim, strategy), "load_avg_1min": os.getloadavg()[0]}
        print(line_of(row), flush=True)
        rows.append(row)
    now.store.close()
    before.store.close()
    return rows


def last_in_flight_h(sim: SimulatedRun) -> float:
    """When the run last had work pending: its last commit but one (the last ends it). The run ends
    before its 24 hours, so the 24 h point measures an ended run, which a resume refuses."""
    return sim.batches[-2].at_s / 3600


def line_of(row: dict[str, Any]) -> str:
    return (f"{row['backend']:<10} {row['strategy']:<8} {row['hours']:>5.1f} h  events {row['events']:>6,}  "
            f"stored {row['stored_bytes'] / 1e6:7.1f} MB (x{row['stored_bytes'] / row['stored_bytes_before']:.3f} "
            f"of {row['stored_bytes_before'] / 1e6:.1f} MB before artifacts; snapshots {row['snapshot_bytes'] / 1e3:.0f} KB)  "
            f"resume {row['resume_s'] * 1000:7.0f} ms (CPU {row['resume_cpu_s'] * 1000:.0f} ms; "
            f"check beside {row['check_s'] * 1000:.0f} ms, "
            f"peak RSS {row['peak_rss_mb']:.0f} MB)  status {row['status_s'] * 1000:6.1f} ms "
            f"(x{row['status_s'] / max(row['status_today_s'], 1e-9):.2f} today)  "
            f"runs list {row['runs_list_s'] * 1000:6.0f} ms  run page {row['run_page_s'] * 1000:6.0f} ms  "
            f"(load average {row['load_avg_1min']:.1f})")


def markdown(rows: list[dict[str, Any]], command: str) -> str:
    out = [f"# Simulated long run ({datetime.date.today()})", "", f"`{command}`", "",
           "| store | strategy | at | events | stored MB | before artifacts MB | × before | snapshots KB | resume ms "
           "| resume CPU ms | pending | check ms | check CPU ms | read ms | handlers' replay ms | peak RSS MB "
           "| status ms | status CPU ms | × today | runs list ms | run page ms | run page CPU ms | load avg |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['backend']} | {r['strategy']} | {r['hours']:.3g} h | {r['events']:,} | "
                   f"{r['stored_bytes'] / 1e6:.1f} | {r['stored_bytes_before'] / 1e6:.1f} | "
                   f"{r['stored_bytes'] / r['stored_bytes_before']:.3f} | {r['snapshot_bytes'] / 1e3:.0f} | "
                   f"{r['resume_s'] * 1000:.0f} | {r['resume_cpu_s'] * 1000:.0f} | {pending_of(r)} | "
                   f"{r['check_s'] * 1000:.0f} | {r['check_cpu_s'] * 1000:.0f} | {r['read_s'] * 1000:.0f} | "
                   f"{r['rebuild_s'] * 1000:.0f} | {r['peak_rss_mb']:.0f} | {r['status_s'] * 1000:.1f} | "
                   f"{r['status_cpu_s'] * 1000:.1f} | {r['status_s'] / max(r['status_today_s'], 1e-9):.2f} | "
                   f"{r['runs_list_s'] * 1000:.0f} | {r['run_page_s'] * 1000:.0f} | {r['run_page_cpu_s'] * 1000:.0f} | "
                   f"{r['load_avg_1min']:.1f} |")
    missed = [f"{r['backend']} {r['strategy']} {r['hours']:.3g} h {name}" for r in rows
              for name, key in (("resume", "resume_s"), ("status", "status_s"), ("run_page", "run_page_s"))
              if r[key] >= TARGETS_S[name]]
    out += ["", "resume: in a fresh process, imports excluded, open the store, check the chain, then "
            "`engine.run.rebuild.quick_state` (the fold from the last snapshot, with the scripts of pending "
            "evaluations): what the driver does before the pending effects (the pending column) run again. "
            "check: `engine.run.rebuild.rebuild` after it, in the same process (read the log once, fold it, "
            "replay every input through the handlers), which the driver runs beside those effects and which "
            "must agree before any result is committed; read and handlers' replay: its parts, timed again "
            "after it (warm). CPU: the measuring "
            "process's own CPU time (user + system) over the same span, for the UI the server's: what the work "
            "costs whatever else the machine runs. load avg: the machine's 1-minute load average when the point "
            "was measured (2 cores); wall times above CPU times are time spent waiting for a core.",
            "", "Targets: resume < 100 ms, status < 100 ms, run page < 1 s. "
            + (f"Missed: {', '.join(missed)}." if missed else "All met.")]
    return "\n".join(out) + "\n"


def pending_of(row: dict[str, Any]) -> str:
    """The effects a resume at this point starts, by kind (agent call, evaluation, timer)."""
    short = {"AgentCallRequested": "agent", "EvaluationRequested": "eval", "TimerRequested": "timer"}
    kinds = [short.get(t, t) for t in row.get("pending", [])]
    return ", ".join(f"{kinds.count(k)} {k}" for k in sorted(set(kinds))) or "none"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    ap.add_argument("--name", default=f"longrun-{datetime.date.today()}",
                    help="the results' file name, without .json/.md (default longrun-<today>)")
    args = ap.parse_args(argv)
    limit_s, points_h = SIZES["smoke" if args.smoke else "full"]
    command = " ".join(["python bench/bench_longrun.py", *(sys.argv[1:] if argv is None else argv)])
    t0 = time.perf_counter()
    sims = [(name, simulate_day(name, limit_s)) for name in ("mle-star", "evolve")]
    print(f"simulated {limit_s / 3600:g} h in {time.perf_counter() - t0:.1f} s: "
          + ", ".join(f"{name} {len(s.batches):,} commits" for name, s in sims), flush=True)
    rows = run_both(sims, points_h)
    if not args.smoke:
        stem = args.out / args.name
        stem.with_suffix(".json").write_text(json.dumps(rows, indent=1) + "\n")
        stem.with_suffix(".md").write_text(markdown(rows, command))
        print(f"wrote {stem}.json and .md")
    print(markdown(rows, command))
    met = all(r[key] < TARGETS_S[name] for r in rows
              for name, key in (("resume", "resume_s"), ("status", "status_s"), ("run_page", "run_page_s")))
    return 0 if met or args.smoke else 1  # `make bench` fails on a missed target


def run_both(sims: list[tuple[str, SimulatedRun]], points_h: tuple[float, ...]) -> list[dict[str, Any]]:
    from store.pg_local import LocalPostgres
    from store.postgres import PostgresEventStore
    from store.sqlite import SQLiteEventStore

    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for strategy, sim in sims:
            dbs = (f"{tmp}/{strategy}.db", f"{tmp}/{strategy}-before.db")
            rows += bench_run("sqlite", dbs, SQLiteEventStore, strategy, sim, points_h)
        with LocalPostgres() as server:
            for strategy, sim in sims:
                name = f"longrun_{strategy.replace('-', '_')}"
                dbs = (database_of(server.url, name), database_of(server.url, name + "_before"))
                rows += bench_run("postgresql", dbs, PostgresEventStore, strategy, sim, points_h)
    return rows


def database_of(server_url: str, name: str) -> str:
    """A new database on the bench's own server, and its URL."""
    import psycopg

    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return server_url.replace("@/postgres?", f"@/{name}?")


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["main"]
