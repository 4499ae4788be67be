"""Crash-exactness with real processes and a real SIGKILL (issue "Event-sourced core", Must show:
"`engine resume` continues a crashed, killed or timed-out run exactly where it stopped, without
repeating any agent call whose result was recorded"; ARCHITECTURE "Atomic reactions").

For every k from 1 to the last seq of an uninterrupted toy run, a fresh run is started with
ENGINE_FAILPOINT_KILL_AFTER_SEQ=k (the driver SIGKILLs itself right after the append reaching
seq >= k), then resumed until it completes. The final log must equal the uninterrupted one event
for event (ignoring recorded_at, elapsed_s/duration_s and driver bookkeeping), and no effect whose
result was recorded before the kill may execute again afterwards.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from replay.state import RESULT_TYPES, fold
from store.sqlite import SQLiteEventStore
from tests.core.helpers import assert_no_traceback, comparable, engine_env, read_log, run_engine, start_toy


def _batches(log) -> list[list[int]]:
    """Seqs grouped by append transaction (one transaction shares one recorded_at)."""
    out: list[list[int]] = []
    for env in log:
        if out and log[out[-1][-1] - 1].recorded_at == env.recorded_at:
            out[-1].append(env.seq)
        else:
            out.append([env.seq])
    return out


def _executions(trace_dir: Path) -> list[str]:
    path = trace_dir / "executions.log"
    return path.read_text().split() if path.exists() else []


def _kill_and_resume(k: int, root: Path, reference: list) -> str | None:
    """One k; returns a description of what went wrong, or None."""
    work = root / f"k{k}"
    db = work / "e.db"
    before, after = work / "trace-before-kill", work / "trace-after-kill"
    before.mkdir(parents=True)
    after.mkdir()
    killed = run_engine(*start_toy(db, "R"), env=engine_env(ENGINE_FAILPOINT_KILL_AFTER_SEQ=str(k),
                                                             TOY_TRACE_DIR=str(before)))
    if killed.returncode != -9:
        return f"k={k}: the driver was not SIGKILLed (rc {killed.returncode}): {killed.stderr[-500:]}"
    at_kill = read_log(db, "R")
    batches = _batches(at_kill)
    if at_kill[-1].seq < k or (len(batches) > 2 and batches[-2][-1] >= k):
        return f"k={k}: the failpoint fired at the wrong append (batches {batches})"
    recorded = {e.payload["effect_id"] for e in at_kill if e.type in RESULT_TYPES}
    resumes = 0
    while not fold(read_log(db, "R")).finished:
        resumes += 1
        if resumes > 3:
            return f"k={k}: still not finished after 3 resumes"
        proc = run_engine("resume", "R", "--db", db, env=engine_env(TOY_TRACE_DIR=str(after)))
        assert_no_traceback(proc)
        if proc.returncode != 0:
            return f"k={k}: resume exited {proc.returncode}: {proc.stderr[-800:]}"
    final = read_log(db, "R")
    got = comparable(final, roots=(str(work.resolve()),))
    if got != reference:
        first = next((i for i, (a, b) in enumerate(zip(got, reference)) if a != b), min(len(got), len(reference)))
        return (f"k={k}: the resumed log differs from the uninterrupted one at filtered index {first}:\n"
                f"  got      {got[first] if first < len(got) else None}\n"
                f"  expected {reference[first] if first < len(reference) else None}")
    again = recorded & set(_executions(after))
    if again:
        return f"k={k}: effects with recorded results executed again after the kill: {sorted(again)}"
    results = {e.payload["effect_id"] for e in final if e.type in RESULT_TYPES}
    if not results <= set(_executions(before)) | set(_executions(after)):
        return f"k={k}: results recorded for effects that never executed"
    if [e.seq for e in final] != list(range(1, len(final) + 1)):
        return f"k={k}: seqs are not gap-free"
    store = SQLiteEventStore(db, create=False)
    problem = store.verify_chain("R")
    store.close()
    if problem is not None:
        return f"k={k}: hash chain broken after resume: {problem}"
    starts = sum(1 for e in final if e.type == "DriverStarted")
    if starts != 1 + resumes:
        return f"k={k}: {starts} DriverStarted events for {resumes} resumes"
    return None


def test_kill_at_every_seq_then_resume_equals_uninterrupted(toy_run, tmp_path: Path) -> None:
    reference = comparable(toy_run.log, roots=(str(toy_run.db.parent.resolve()),))
    assert any(r[0] == "AgentCallCompleted" for r in reference)
    last = toy_run.log[-1].seq
    with ThreadPoolExecutor(max_workers=2) as pool:
        problems = [p for p in pool.map(lambda k: _kill_and_resume(k, tmp_path, reference), range(1, last + 1)) if p]
    assert not problems, "\n".join(problems)


def test_comparison_is_sensitive(toy_run) -> None:
    """The log comparison used above does see a changed decision, a changed result and a reordering."""
    roots = (str(toy_run.db.parent.resolve()),)
    reference = comparable(toy_run.log, roots)
    log = list(toy_run.log)
    i = next(i for i, e in enumerate(log) if e.type == "AgentCallCompleted")
    changed = log[:i] + [log[i].model_copy(update={"payload": {**log[i].payload, "text": "other"}})] + log[i + 1:]
    assert comparable(changed, roots) != reference
    swapped = log[:i] + [log[i + 1], log[i]] + log[i + 2:]
    assert comparable(swapped, roots) != reference
    timing = [e.model_copy(update={"recorded_at": "x", "payload": {**e.payload, "elapsed_s": 99.0}})
              if "elapsed_s" in e.payload else e for e in log]
    assert comparable(timing, roots) == reference
