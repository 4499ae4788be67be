"""Kill-and-resume machinery for whole-pipeline crash tests with real processes.

A *plan* is a list of seqs of the uninterrupted run: the run is started with
``ENGINE_FAILPOINT_KILL_AFTER_SEQ`` = the first (the driver SIGKILLs itself right after the append
reaching it), resumed with the next one as its failpoint, and so on; a last resume without a
failpoint drives it to the end. A resume adds one event, its ``DriverStarted``, and then appends
what the uninterrupted run did, so a resumed process's failpoint is the planned seq moved by the
``DriverStarted`` events the resumes added (``failpoint_seq``): every kill of a plan lands after the
same event as a kill of a fresh run at that seq would. Every
process appends the effect ids it starts executing to its own ``ENGINE_EFFECT_TRACE`` file, so
"no agent call or evaluation repeated after its result was recorded" is checked against the
results committed at each kill. The outcome is compared with an uninterrupted run of the same
seed: the RunCompleted result (FinalResult) and every decision, up to driven-time fields and the
run's own directory (see ``comparable_decisions``).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from events.base import Envelope
from replay.state import RESULT_TYPES, fold
from store.sqlite import SQLiteEventStore
from tests.core.helpers import engine_env, read_log, run_engine

RUN_ID = "crash"
DECISION_EXCLUDED = frozenset({"DriverStarted", "DriverStopped"})


@dataclass(frozen=True)
class Recipe:
    """How to start the run under test."""

    task: str
    agent: str
    strategy: str = "mle-star"
    settings: tuple[str, ...] = ()
    seed: int = 0

    def start_args(self, db: Path) -> list[str]:
        args = ["start", "--task", self.task, "--strategy", self.strategy, "--agent", self.agent,
                "--preset", "quick", "--seed", str(self.seed), "--run-id", RUN_ID, "--db", str(db)]
        for setting in self.settings:
            args += ["--set", setting]
        return args


def volatile(key: str) -> bool:
    return key.endswith(("_s", "_seconds")) or key in ("duration_summary", "recorded_at")


def strip(value: Any, root: str) -> Any:
    if isinstance(value, dict):
        return {k: strip(v, root) for k, v in value.items() if not volatile(k)}
    if isinstance(value, list):
        return [strip(v, root) for v in value]
    if isinstance(value, str) and root and root in value:
        return value.replace(root, "<ROOT>")
    if isinstance(value, float) and value != value:
        return "nan"
    return value


def final_result(log: list[Envelope], root: Path) -> Any:
    done = [e for e in log if e.type == "RunCompleted"]
    assert done, f"the run did not complete: it ends with {log[-1].type}"
    return strip(done[0].payload, str(root.resolve()))


def comparable_decisions(log: list[Envelope], root: Path) -> list[str]:
    from events.base import event_class

    return [json.dumps([e.type, e.scope, strip(e.payload, str(root.resolve()))], sort_keys=True)
            for e in log if e.type not in DECISION_EXCLUDED and event_class(e.type).kind in ("decision", "remark")]


def run_reference(recipe: Recipe, work: Path) -> list[Envelope]:
    work.mkdir(parents=True, exist_ok=True)
    db = work / "e.db"
    proc = run_engine(*recipe.start_args(db), env=engine_env(), timeout=600, cwd=work)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return read_log(db, RUN_ID)


def failpoint_seq(k: int, log: list[Envelope], reference: list[Envelope]) -> int:
    """The seq, in a run resumed from ``log``, of the uninterrupted run's event ``k``: moved by the
    ``DriverStarted`` events this log holds beyond the reference's before ``k``, plus the one the
    coming resume records."""
    if not log:
        return k  # a fresh run: its seqs are the reference's
    started = sum(e.type == "DriverStarted" for e in log) + 1
    return k + started - sum(e.type == "DriverStarted" and e.seq <= k for e in reference)


def _trace(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


def kill_and_resume(recipe: Recipe, plan: list[int], work: Path, reference: list[Envelope],
                    reference_root: Path) -> str | None:
    """Run ``plan``; a description of what went wrong, or None."""
    work.mkdir(parents=True)
    db = work / "e.db"
    label = f"kills at {plan}"
    recorded: set[str] = set()
    executed_after: list[tuple[set[str], list[str]]] = []
    traces: list[Path] = []
    for i, planned in enumerate([*plan, None]):
        log = read_log(db, RUN_ID) if i > 0 else []
        if i > 0 and fold(log).finished:
            break  # killed after the run's last append: it is complete, there is nothing to resume
        trace = work / f"trace-{i}.txt"
        traces.append(trace)
        extra = {"ENGINE_EFFECT_TRACE": str(trace)}
        k = None if planned is None else failpoint_seq(planned, log, reference)
        if k is not None:
            extra["ENGINE_FAILPOINT_KILL_AFTER_SEQ"] = str(k)
        args = recipe.start_args(db) if i == 0 else ["resume", RUN_ID, "--db", str(db)]
        proc = run_engine(*args, env=engine_env(**extra), timeout=600, cwd=work)
        if k is not None and proc.returncode != -9:
            if proc.returncode == 0 and i > 0:
                continue  # the run ended before reaching this failpoint: nothing more to kill
            return f"{label}: process {i} was not SIGKILLed (rc {proc.returncode}): {proc.stderr[-800:]}"
        if k is None and proc.returncode != 0:
            return f"{label}: the last resume exited {proc.returncode}: {proc.stdout[-500:]} {proc.stderr[-1500:]}"
        if re.search(r"^Traceback", proc.stderr, re.M):  # the engine's own (scripts' are logged as JSON)
            return f"{label}: a traceback in process {i}: {proc.stderr[-1500:]}"
        executed_after.append((set(recorded), _trace(trace)))
        log = read_log(db, RUN_ID)
        if k is not None and log[-1].seq < k:
            return f"{label}: killed at seq {log[-1].seq}, before its failpoint {k}"
        recorded = {e.payload["effect_id"] for e in log if e.type in RESULT_TYPES}
    final = read_log(db, RUN_ID)
    if not fold(final).finished:
        return f"{label}: the run is not finished after the last resume"
    for before, ran in executed_after:
        again = before & set(ran)
        if again:
            return f"{label}: effects whose results were recorded ran again after a kill: {sorted(again)[:10]}"
    results = {e.payload["effect_id"] for e in final if e.type in RESULT_TYPES and e.type != "TimerFired"}
    ever = {x for t in traces for x in _trace(t)}
    if not results <= ever:
        return f"{label}: results recorded for effects that never executed: {sorted(results - ever)[:5]}"
    got, want = final_result(final, work), final_result(reference, reference_root)
    if got != want:
        return f"{label}: the FinalResult differs from the uninterrupted run's:\n{_first_diff(got, want)}"
    mine, theirs = comparable_decisions(final, work), comparable_decisions(reference, reference_root)
    if mine != theirs:
        i = next((i for i, (a, b) in enumerate(zip(mine, theirs)) if a != b), min(len(mine), len(theirs)))
        return (f"{label}: decision #{i} differs from the uninterrupted run's:\n  got  {mine[i][:600] if i < len(mine) else None}"
                f"\n  want {theirs[i][:600] if i < len(theirs) else None}")
    store = SQLiteEventStore(db, create=False)
    problem = store.verify_chain(RUN_ID)
    store.close()
    if problem is not None:
        return f"{label}: the hash chain is broken after resuming: {problem}"
    return None


def _first_diff(got: Any, want: Any, path: str = "") -> str:
    if isinstance(got, dict) and isinstance(want, dict):
        for k in sorted(set(got) | set(want)):
            if got.get(k) != want.get(k):
                return _first_diff(got.get(k), want.get(k), f"{path}.{k}")
    if isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        for i, (a, b) in enumerate(zip(got, want)):
            if a != b:
                return _first_diff(a, b, f"{path}[{i}]")
    return f"  at {path or '<root>'}: got {str(got)[:300]} / want {str(want)[:300]}"


def phase_of(scope: str) -> str:
    return scope.split("/")[0]


def sample_points(log: list[Envelope], per_phase: dict[str, int], seed: int) -> dict[str, list[int]]:
    """A seeded sample of kill seqs per phase: seqs of events recorded in that phase's scope."""
    rng = random.Random(seed)
    out: dict[str, list[int]] = {}
    last = log[-1].seq
    for phase, n in per_phase.items():
        seqs = [e.seq for e in log if phase_of(e.scope) == phase and e.seq < last]
        out[phase] = sorted(rng.sample(seqs, min(n, len(seqs))))
    return out


def inner_loop_while_other_path_ablates(log: Iterable[Envelope]) -> int | None:
    """The first seq at which one Phase 2 path has an inner-loop effect in flight (``…/t*/k*/…``)
    while another path still has an ablation effect in flight (``…/ablation…``)."""
    pending: dict[str, str] = {}
    for e in log:
        p = e.payload
        if e.type in ("AgentCallRequested", "EvaluationRequested"):
            pending[p["effect_id"]] = e.scope
        elif e.type in RESULT_TYPES or e.type == "EffectCancelled":
            pending.pop(p.get("effect_id", ""), None)
        inner = {s for eid, s in pending.items() if s.startswith("phase2/path-") and "/k" in eid.split(s, 1)[-1]}
        ablating = {s for eid, s in pending.items() if s.startswith("phase2/path-") and "/ablation" in eid}
        if inner and ablating - inner:
            return e.seq
    return None
