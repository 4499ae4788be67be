"""Stop-and-resume machinery: SIGINT a real ``engine`` process at many points of a run.

The run is started, and each time the store shows ``every`` more events than at the previous
stop, the process gets SIGINT (only once its driver holds the run: a ``DriverStarted`` of its own
is in the log), every other time twice in a row. Each stop must end the process within seconds
(issue 61: a stopped engine is gone within seconds, whatever was in flight): within
``STOP_BOUND_S``, or, on a machine slow enough that the same process took long to start, within
``STOP_BOUND_STARTUPS`` times its own start (from launch to its ``DriverStarted``). The verdict
compares two times measured on the same machine at the same moment, not one time with a
constant a starved machine can miss; a stop that hangs (a thread or a child left waiting on)
still fails it. Each stop must also end with exit code 1, ``DriverStopped`` as the run's last
event naming the signal and no traceback; then ``engine resume`` drives it on to the next stop,
and a last resume drives it to the end. The outcome is compared with an uninterrupted run of the
same arguments as the SIGKILL plans compare theirs (``tests.crash.harness``).
"""

from __future__ import annotations

import re
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from events.base import Envelope
from replay.state import fold
from store.base import RunNotFound
from store.sqlite import SQLiteEventStore
from tests.core.helpers import engine_cmd, engine_env, read_log
from tests.crash.harness import comparable_decisions, final_result

STOP_BOUND_S = 10.0
STOP_BOUND_STARTUPS = 3.0  # tearing down takes less than importing the engine and loading the run
POLL_S = 0.02
SECOND_SIGNAL_AFTER_S = 0.05
RUN_TIMEOUT_S = 600.0  # a safety net for a process that never ends, not a measurement


@dataclass
class Stop:
    signalled_at_seq: int
    exit_s: float
    bound_s: float
    returncode: int
    last_event: str
    reason: str


@dataclass
class Chain:
    stops: list[Stop] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


class _LogWatch:
    """The run's last seq and its number of ``DriverStarted`` events as the store shows them
    now, reading only what was appended since the last look."""

    def __init__(self, db: Path, run_id: str) -> None:
        self.db = db
        self.run_id = run_id
        self.seq = 0
        self.sessions = 0
        self._store: SQLiteEventStore | None = None

    def look(self) -> None:
        if self._store is None:
            if not self.db.exists():
                return
            self._store = SQLiteEventStore(self.db, create=False)
        try:
            for env in self._store.read(self.run_id, from_seq=self.seq + 1):
                self.seq = env.seq
                self.sessions += env.type == "DriverStarted"
        except RunNotFound:
            return

    def close(self) -> None:
        if self._store is not None:
            self._store.close()


@dataclass
class _Signalled:
    seq: int          # the seq the log had reached when the signal went
    startup_s: float  # from launching the process to seeing its DriverStarted


def _signal_when(proc: subprocess.Popen[str], watch: _LogWatch, at_seq: int, sessions_before: int,
                 twice: bool) -> _Signalled | None:
    """Wait until this process drives the run and the log reaches ``at_seq``, then SIGINT it
    (``twice``: again a moment later); None: the process ended first."""
    launched = time.monotonic()
    startup_s: float | None = None
    deadline = launched + RUN_TIMEOUT_S
    while proc.poll() is None and time.monotonic() < deadline:
        watch.look()
        if watch.sessions > sessions_before and startup_s is None:
            startup_s = time.monotonic() - launched
        if startup_s is not None and watch.seq >= at_seq:
            proc.send_signal(signal.SIGINT)
            if twice:  # as an impatient user's second Ctrl-C, while the first stop unwinds
                time.sleep(SECOND_SIGNAL_AFTER_S)
                proc.send_signal(signal.SIGINT)
            return _Signalled(watch.seq, startup_s)
        time.sleep(POLL_S)
    return None


def _one_stop(i: int, proc: subprocess.Popen[str], err: Path, log_of: Callable[[], list[Envelope]],
              signalled: _Signalled, chain: Chain, *, twice: bool) -> None:
    sent = time.monotonic()
    try:
        proc.wait(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    exit_s = time.monotonic() - sent
    stderr = err.read_text()
    log = log_of()
    last = log[-1]
    bound_s = max(STOP_BOUND_S, STOP_BOUND_STARTUPS * signalled.startup_s)
    stop = Stop(signalled.seq, round(exit_s, 2), round(bound_s, 2), proc.returncode, last.type,
                last.payload.get("reason", ""))
    chain.stops.append(stop)
    if fold(log).finished:
        return  # the signal came with the run's last append: nothing was left to stop
    where = f"process {i} (SIGINT at seq {signalled.seq})"
    if exit_s > bound_s:
        chain.problems.append(f"{where} took {exit_s:.1f} s to exit after SIGINT (bound {bound_s:.1f} s: "
                              f"it took {signalled.startup_s:.1f} s to start)")
    # A second SIGINT that comes after the driver has recorded its stop ends the process as an
    # interrupted command ends (130, or killed by SIGINT itself): nothing is left to lose by then.
    ends = (1, 130, -signal.SIGINT) if twice else (1,)
    if proc.returncode not in ends or last.type != "DriverStopped" or last.payload.get("reason") != "signal SIGINT":
        chain.problems.append(f"{where}: exit {proc.returncode}, last event {last.type} {last.payload}: "
                              f"{stderr[-1500:]}")
    if re.search(r"^Traceback", stderr, re.M):
        chain.problems.append(f"{where}: a traceback: {stderr[-1500:]}")


def sigint_chain(start_args: list[str], run_id: str, every: int, work: Path) -> Chain:
    """``engine start`` the run (``start_args`` without --db, which is ``work/e.db``), SIGINT it each
    ``every`` events and resume it, until a resume completes."""
    work.mkdir(parents=True)
    db = work / "e.db"
    chain = Chain()
    watch = _LogWatch(db, run_id)
    at_seq = every
    try:
        for i in range(1000):
            watch.look()
            args = [*start_args, "--db", str(db)] if i == 0 else ["resume", run_id, "--db", str(db)]
            err = work / f"stderr-{i}.txt"
            with err.open("w") as err_file:  # a file, not a pipe: nobody reads it while the run goes on
                proc = subprocess.Popen(engine_cmd(*args), env=engine_env(), stdout=subprocess.DEVNULL,
                                        stderr=err_file, text=True, cwd=work, stdin=subprocess.DEVNULL)
            twice = i % 2 == 1
            signalled = _signal_when(proc, watch, at_seq, watch.sessions, twice=twice)
            if signalled is None:  # it ended on its own: the last resume
                proc.wait()
                if proc.returncode != 0:
                    chain.problems.append(f"the last process (#{i}) exited {proc.returncode}: {err.read_text()[-1500:]}")
                return chain
            _one_stop(i, proc, err, lambda: read_log(db, run_id), signalled, chain, twice=twice)
            if chain.problems or fold(read_log(db, run_id)).finished:
                return chain
            at_seq = max(at_seq, signalled.seq) + every
    finally:
        watch.close()
    raise AssertionError("the run neither completed nor stopped making progress")


def compare_with_reference(work: Path, run_id: str, reference: list[Envelope], reference_root: Path) -> str | None:
    """What differs between the stopped-and-resumed run and the uninterrupted one (None: nothing)."""
    final = read_log(work / "e.db", run_id)
    if final_result(final, work) != final_result(reference, reference_root):
        return "the FinalResult differs from the uninterrupted run's"
    mine, theirs = comparable_decisions(final, work), comparable_decisions(reference, reference_root)
    if mine != theirs:
        i = next((i for i, (a, b) in enumerate(zip(mine, theirs)) if a != b), min(len(mine), len(theirs)))
        return (f"decision #{i} differs from the uninterrupted run's:\n  got  {mine[i][:600] if i < len(mine) else None}"
                f"\n  want {theirs[i][:600] if i < len(theirs) else None}")
    store = SQLiteEventStore(work / "e.db", create=False)
    try:
        problem = store.verify_chain(run_id)
    finally:
        store.close()
    return f"the hash chain is broken after resuming: {problem}" if problem is not None else None
