"""Replay-based regression suite (issue "Replay-based regression suite and deterministic re-runs").

Item 1: every recorded run in ``tests/replays/*.jsonl`` is fed back through the CURRENT handlers
(``engine.run.replayer.replay_log`` → ``replay.verify``); the first decision that differs fails the
test with ``Divergence.describe()``. A behaviour change that is intended is made visible here and
accepted by re-recording (``make fixtures``; see README "Replay fixtures").
Item 3: a log written before ``Note`` v2 still loads and replays through the v1 upcaster.
Item 4: ``engine replay --against FILE`` and ``engine replay RUN`` on the fixtures.
(ARCHITECTURE: "a recorded run replays deterministically: tests feed a recorded log back through
the handlers and fail on the first decision that differs".)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.run.replayer import read_export, replay_log
from events.base import _UPCASTERS, load_event
from events.core import Note
from store.sqlite import SQLiteEventStore
from tests.core.helpers import engine_env, run_engine
from tests.replays.fixtures import FAKE_CLAUDE, FAKE_CLAUDE_MERGE_CRASH, FIXTURES, read_fixture, reseal, write_jsonl

IDS = [f.name for f in FIXTURES]


@pytest.mark.parametrize("spec", FIXTURES, ids=IDS)
def test_fixture_replays_without_divergence(spec) -> None:
    """Item 1: the whole recorded log re-derives decision for decision."""
    assert spec.path.is_file(), f"{spec.path} is missing: run `python -m tests.replays.record {spec.name}`"
    envelopes = read_export(spec.path)
    assert envelopes[0].type == "RunStarted" and envelopes[-1].type == "RunCompleted"
    divergence, count = replay_log(envelopes)
    if divergence is not None:
        pytest.fail(f"{spec.name} ({count} events) no longer replays; if the change is intended, re-record it "
                    f"with `python -m tests.replays.record {spec.name}`.\n\n{divergence.describe()}", pytrace=False)


def test_fixture_set_covers_the_issue() -> None:
    """Item 1: mle-star ×2 and evolve ×2 with the builtin agent, ≥2 MLE-STAR runs through the Claude
    backend's protocol-level double including a debug round, a leakage correction and a failed merge."""
    logs = {f.name: read_fixture(f.path) for f in FIXTURES}
    started = {n: log[0].payload for n, log in logs.items()}
    builtin = [n for n, s in started.items() if s["backend"] == "builtin"]
    assert sum(started[n]["strategy"] == "mle-star" for n in builtin) >= 2
    assert sum(started[n]["strategy"] == "evolve" for n in builtin) >= 2
    assert len({started[n]["task"]["competition_id"] for n in builtin if started[n]["strategy"] == "evolve"}) >= 2
    claude = [n for n, s in started.items() if s["backend"] in (FAKE_CLAUDE, FAKE_CLAUDE_MERGE_CRASH)]
    assert len(claude) >= 2 and all(started[n]["strategy"] == "mle-star" for n in claude)
    events = [e for n in claude for e in logs[n]]
    requests = {e.payload["effect_id"]: e.payload for e in events if e.type == "AgentCallRequested"}
    completed = {e.payload["effect_id"]: e.payload for e in events if e.type == "AgentCallCompleted"}
    assert any(p["agent_type"] == "debugger" and "```python" in completed[i]["text"] for i, p in requests.items())
    assert any(p["agent_type"] == "leakage" and p["variant"] == "correction" for p in requests.values())
    assert any(e.type == "Note" and e.payload["message"].startswith("leakage corrected") for e in events)
    merges = [e.payload for e in events if e.type == "MergeDecided"]
    assert {m.get("reason") for m in merges if not m["accepted"]} >= {"no improvement", "merged script failed"}
    debugged = [e for e in events if e.type == "SolutionRecorded" and e.payload["origin"] == "debug"]
    assert debugged, "no debug round in the Claude fixtures"
    # The answers really came through the SDK: cost, usage and a session id from the CLI's result message.
    assert all(p["session_id"] and p["cost_usd"] and p["usage"].get("num_turns") for p in completed.values())


@pytest.mark.parametrize("spec", FIXTURES, ids=IDS)
def test_fixture_hash_chain_imports(spec, tmp_path: Path) -> None:
    """The exports are sealed logs (a v1 fixture re-sealed after its rewrite): `engine import` accepts them."""
    store = SQLiteEventStore(tmp_path / "e.db")
    with open(spec.path, encoding="utf-8") as fh:
        assert store.import_jsonl(fh) == spec.run_id
    assert store.verify_chain(spec.run_id) is None
    store.close()


def _legacy():
    spec = next(f for f in FIXTURES if f.note_v1)
    return spec, read_fixture(spec.path)


def test_note_v1_fixture_is_really_old() -> None:
    """Item 3: the legacy fixture holds Note events of schema v1 (no ``refs``), nothing newer."""
    _, envelopes = _legacy()
    notes = [e for e in envelopes if e.type == "Note"]
    assert notes and all(e.version == 1 and "refs" not in e.payload for e in notes)
    assert Note.version == 2


def test_note_v1_loads_through_the_upcaster() -> None:
    """Item 3: each v1 payload becomes a v2 Note whose refs are the requirement ids of its message."""
    _, envelopes = _legacy()
    upcast = [e.event() for e in envelopes if e.type == "Note"]
    assert all(isinstance(n, Note) for n in upcast)
    cited = [n for n in upcast if n.refs]
    assert cited, "the legacy fixture should hold at least one note citing a requirement"
    for note in cited:
        assert all(ref in note.message for ref in note.refs)
    assert load_event("Note", 1, {"level": "info", "message": "see REQ-P1-021 and REQ-OR-030.4"}).refs == [
        "REQ-P1-021", "REQ-OR-030.4"]


def test_note_v1_without_the_upcaster_does_not_load(monkeypatch) -> None:
    """The v1 test above can fail: with the upcaster unregistered the old log is unreadable."""
    _, envelopes = _legacy()
    monkeypatch.delitem(_UPCASTERS, ("Note", 1))
    with pytest.raises(ValueError, match="no upcaster for Note from v1"):
        replay_log(envelopes)


def test_rewritten_note_v1_payload_is_a_remark(tmp_path: Path) -> None:
    """A v1 note whose message was reworded (and the chain re-sealed) still loads through the upcaster
    and replays: notes are remarks, never compared (a changed decision is caught: the test below)."""
    _, envelopes = _legacy()
    records = [e.model_dump(mode="json") for e in envelopes]
    i = next(i for i, r in enumerate(records) if r["type"] == "Note")
    records[i]["payload"]["message"] += " (edited)"
    divergence, _ = replay_log(reseal(records))
    assert divergence is None


def test_engine_replay_against_every_fixture() -> None:
    """Item 4: `engine replay RUN --against FILE` exits 0 on every fixture (one process per fixture)."""
    for spec in FIXTURES:
        proc = run_engine("replay", spec.run_id, "--against", spec.path, env=engine_env())
        assert proc.returncode == 0, proc.stderr
        assert f"OK: {spec.path}" in proc.stdout and "every decision matches" in proc.stdout


def test_engine_replay_against_a_changed_log_names_the_divergence(tmp_path: Path) -> None:
    """Item 4: a re-sealed copy with one decision changed exits 1 and names its seq."""
    spec = FIXTURES[0]
    records = [e.model_dump(mode="json") for e in read_fixture(spec.path)]
    i = next(i for i, r in enumerate(records) if r["type"] == "CandidatesRanked")
    records[i]["payload"]["order"] = list(reversed(records[i]["payload"]["order"]))
    changed = tmp_path / "changed.jsonl"
    write_jsonl(reseal(records), changed)
    proc = run_engine("replay", spec.run_id, "--against", changed, env=engine_env())
    assert proc.returncode == 1
    assert f"first divergence at seq {records[i]['seq']}" in proc.stderr and "CandidatesRanked" in proc.stderr


def test_engine_replay_of_an_imported_fixture(tmp_path: Path) -> None:
    """Item 4: `engine import` then `engine replay RUN` (from the database) agrees with the file."""
    spec = next(f for f in FIXTURES if f.strategy == "evolve")
    db = tmp_path / "e.db"
    assert run_engine("import", spec.path, "--db", db).returncode == 0
    proc = run_engine("replay", spec.run_id, "--db", db)
    assert proc.returncode == 0, proc.stderr
    assert f"OK: run {spec.run_id}" in proc.stdout


def test_read_export_rejects_garbage(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"not": "an event"}\n')
    with pytest.raises(Exception, match="not an exported event"):
        read_export(bad)
