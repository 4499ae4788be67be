"""What a resume reads (engine/run/rebuild.py). Before its first effect: the fold from the last
snapshot, with the scripts its pending evaluations need. For the handlers' check beside the effects:
the log once, every artifact resolved but the prompts of agent calls that have ended — compared by
digest with the prompts the handlers build again, so a changed prompt is still a divergence, named
at its seq."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.run.rebuild import quick_state, read_for_resume, rebuild
from engine.run.replayer import read_export
from engine.run.snapshots import state_of
from engine.run.strategies import load_strategy
from events.base import NewEvent
from events.core import AgentCallRequested
from handlers.runtime import Runtime
from replay.snapshot import FORMAT, restore
from replay.state import fold
from replay.verify import verify
from store.artifacts import is_ref
from store.base import CorruptLog
from store.snapshots import table_of
from store.sqlite import SQLiteEventStore

FIXTURE = Path(__file__).parents[1] / "replays" / "mle-star-wine-builtin.jsonl"


def _recorded(db: Path, upto: int | None = None) -> tuple[SQLiteEventStore, str]:
    store = SQLiteEventStore(db)
    return store, record_wine(store, upto)


def record_wine(store: Any, upto: int | None = None) -> str:
    """The wine run appended through today's store (its long strings become artifacts), its
    first ``upto`` events only (a run stopped there), as one commit; its run id."""
    envelopes = read_export(FIXTURE)
    if upto is not None:  # cut where a commit ends: before the next event no earlier one caused
        upto = max(k for k in range(1, upto + 1) if envelopes[k].causation_seq is None)
        envelopes = envelopes[:upto]
    store.create_run("wine", strategy="mle-star", task="wine")
    store.append("wine", [NewEvent(event=e.event(), scope=e.scope, causation_seq=e.causation_seq)
                          for e in envelopes], expected_seq=0)
    return "wine"


def _prompt_refs(payload: dict[str, Any]) -> bool:
    return is_ref(payload.get("prompt"))


def test_ended_prompts_stay_references_and_everything_else_reads_whole(tmp_path: Path) -> None:
    store, run = _recorded(tmp_path / "e.db", upto=120)
    whole = list(store.read(run))
    read = read_for_resume(store, run)
    state = fold(whole)
    assert [e.seq for e in read] == [e.seq for e in whole]
    left = [e for e in read if e.type == "AgentCallRequested" and _prompt_refs(e.payload)]
    assert left, "the fixture's prompts are long enough to be artifacts"
    for got, full in zip(read, whole):
        if got in left:
            assert got.payload["effect_id"] not in state.pending     # only ended calls' prompts
        else:
            assert got == full                                        # resolved as store.read resolves
    pending_calls = [e for e in read if e.type == "AgentCallRequested" and e.payload["effect_id"] in state.pending]
    assert all(isinstance(e.payload["prompt"], str) for e in pending_calls)


def test_the_rebuild_agrees_with_the_whole_log_and_its_fold(tmp_path: Path) -> None:
    store, run = _recorded(tmp_path / "e.db", upto=150)
    rebuilt = rebuild(store, run, load_strategy("mle-star"))
    whole = fold(store.read(run))
    assert rebuilt.divergence is None
    assert rebuilt.state.summary() == whole.summary() and rebuilt.state.pending == whole.pending
    assert rebuilt.state.solutions == whole.solutions


class _ChangedPrompt:
    """The handlers, but the n-th agent call's prompt built differently (a planted change)."""

    def __init__(self, n: int) -> None:
        self.runtime = Runtime(load_strategy("mle-star"))
        self.left = n

    def feed(self, event: Any) -> list[NewEvent]:
        out = []
        for d in self.runtime.feed(event):
            if isinstance(d.event, AgentCallRequested):
                self.left -= 1
                if self.left == 0:
                    d = NewEvent(event=d.event.model_copy(update={"prompt": d.event.prompt + "\nchanged"}),
                                 scope=d.scope, causation_seq=d.causation_seq)
            out.append(d)
        return out


def test_a_prompt_built_differently_is_a_divergence_though_it_was_not_read(tmp_path: Path) -> None:
    store, run = _recorded(tmp_path / "e.db")
    read = read_for_resume(store, run)
    calls = [e for e in read if e.type == "AgentCallRequested"]
    n = next(i for i, e in enumerate(calls, start=1) if _prompt_refs(e.payload))
    divergence, _ = verify(read, lambda: _ChangedPrompt(n))
    assert divergence is not None and divergence.seq == calls[n - 1].seq
    assert "the handlers decided differently" in divergence.describe()


def test_a_missing_artifact_a_resume_needs_is_named_by_its_event(tmp_path: Path) -> None:
    store, run = _recorded(tmp_path / "e.db", upto=120)
    needed = next(e for e in store.read_sealed(run) if e.type == "SolutionRecorded" and is_ref(e.payload["content"]))
    store.conn.execute("DELETE FROM artifacts WHERE digest=?", (needed.payload["content"]["$artifact"],))
    with pytest.raises(CorruptLog, match=f"run {run} seq {needed.seq}: the artifact sha256:.* is missing"):
        read_for_resume(store, run)


def _cut_with_an_evaluation_pending(after: int = 0) -> int:
    """The first commit boundary of the wine run past ``after`` where an evaluation waits for a script."""
    envelopes = read_export(FIXTURE)
    for k in range(after + 1, len(envelopes)):
        if envelopes[k].causation_seq is None and any(
                p.type == "EvaluationRequested" for p in fold(envelopes[:k]).pending.values()):
            return k
    raise AssertionError("the wine run never waits for an evaluation")


@pytest.mark.parametrize("folded_after", [0, 25], ids=["snapshot-at-the-end", "events-after-the-snapshot"])
def test_a_resume_starts_from_the_last_snapshot_with_the_scripts_its_evaluations_need(tmp_path: Path,
                                                                                      folded_after: int) -> None:
    envelopes = read_export(FIXTURE)
    cut = _cut_with_an_evaluation_pending(after=60)
    first = max(k for k in range(1, cut - folded_after + 1) if envelopes[k].causation_seq is None)
    store, run = _recorded(tmp_path / "e.db", upto=first)
    state_of(store, run, every=1)  # a snapshot at the last event recorded so far
    if folded_after:
        rest = envelopes[first:cut]
        store.append(run, [NewEvent(event=e.event(), scope=e.scope, causation_seq=e.causation_seq) for e in rest],
                     expected_seq=store.last_seq(run))
    whole = fold(store.read(run))
    assert table_of(store).latest(run, FORMAT).seq == first and whole.last_seq == cut
    assert any(e.type == "SolutionRecorded" for e in envelopes[first:cut]) or not folded_after
    quick = quick_state(store, run)
    assert quick.pending == whole.pending and quick.summary() == whole.summary()
    waiting = [p.payload["solution_id"] for p in quick.pending.values() if p.type == "EvaluationRequested"]
    assert waiting
    for solution_id in waiting:
        assert quick.solutions[solution_id].content == whole.solutions[solution_id].content != ""
    others = [s for s in quick.solutions.values() if s.solution_id not in waiting]
    assert others and all(s.content == "" for s in others), "a snapshot leaves the other scripts out"


def test_what_a_resume_runs_comes_from_the_sealed_log_not_from_its_snapshot(tmp_path: Path) -> None:
    store, run = _recorded(tmp_path / "e.db", upto=_cut_with_an_evaluation_pending())
    state_of(store, run, every=1)
    table = table_of(store)
    snap = table.latest(run, FORMAT)
    data = json.loads(snap.state)
    pending = {p["effect_id"] for p in data["pending"]}
    for p in data["pending"] + [r for r in data["requests"] if r["effect_id"] in pending]:
        p["payload"] = {**p["payload"], "purpose": "rewritten", "timeout_seconds": 1}  # the table is not sealed
    store.conn.execute("UPDATE snapshots SET state=? WHERE run_id=? AND seq=?", (json.dumps(data), run, snap.seq))
    assert {p.payload["purpose"] for p in restore(table.latest(run, FORMAT)).pending.values()} == {"rewritten"}
    quick = quick_state(store, run)
    assert quick.pending == fold(store.read(run)).pending
