"""Artifacts by content (issue 63, "Artifacts by content"): a recorded run's long strings go into
the artifact tables once, the log replays the same from the store and from its export, `engine
verify` names a changed artifact and the event referring to it, and a database written before
artifacts opens and gains their tables. The store contract (tests/core/store_contract.py) holds
the backend-neutral cases, run on SQLite and PostgreSQL."""

from __future__ import annotations

import hashlib
import io
import json
import sqlite3
import zlib
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.run.replayer import read_export, replay_log
from events.base import NewEvent
from events.core import AgentCallRequested, Note
from replay.verify import same_decision
from store.artifacts import MIN_BYTES, chunks_of, digest_of, externalise, resolved
from store.sqlite import SCHEMA_VERSION, SQLiteEventStore
from tests.core.helpers import assert_no_traceback, run_engine

FIXTURE = Path(__file__).parents[1] / "replays" / "mle-star-wine-builtin.jsonl"


def _recorded_again(db: Path) -> tuple[SQLiteEventStore, str, int]:
    """A recorded MLE-STAR run (the wine fixture, written before artifacts) appended event by
    event through today's store, as its driver appended it: its long strings become artifacts."""
    envelopes = read_export(FIXTURE)
    store = SQLiteEventStore(db)
    run = "wine-again"
    store.create_run(run, strategy="mle-star", task="wine")
    store.append(run, [NewEvent(event=e.event(), scope=e.scope, causation_seq=e.causation_seq) for e in envelopes],
                 expected_seq=0)
    return store, run, len(envelopes)


def test_a_recorded_run_stored_with_artifacts_is_smaller_and_replays_as_recorded(tmp_path: Path) -> None:
    store, run, count = _recorded_again(tmp_path / "e.db")
    stored = sum(len(p) for (p,) in store.conn.execute("SELECT payload FROM events"))
    kept = sum(n for (n,) in store.conn.execute("SELECT length(chunks) FROM artifacts"))
    kept += sum(n for (n,) in store.conn.execute("SELECT length(data) FROM artifact_chunks"))
    whole = sum(len(json.dumps(e.payload, ensure_ascii=False).encode()) for e in read_export(FIXTURE))
    assert (stored + kept) * 10 < whole
    assert store.verify_chain(run) is None
    divergence, replayed = replay_log(list(store.read(run)))
    assert divergence is None and replayed == count
    export = tmp_path / "wine.jsonl"
    with open(export, "w", encoding="utf-8") as fh:
        store.export_jsonl(run, fh)
    assert '"$artifact"' in export.read_text(encoding="utf-8")
    divergence, _ = replay_log(read_export(export))
    assert divergence is None


def test_engine_verify_names_the_changed_artifact_and_the_event_referring_to_it(tmp_path: Path) -> None:
    store, run, _ = _recorded_again(tmp_path / "e.db")
    seq, payload = next((s, p) for s, p in store.conn.execute("SELECT seq, payload FROM events ORDER BY seq")
                        if '"$artifact"' in p)
    digest = next(v["$artifact"] for v in json.loads(payload).values() if isinstance(v, dict) and "$artifact" in v)
    text = store.artifact_reader()
    text.load([digest])
    original = text.texts[digest]
    first_chunk = chunks_of(original)[0]
    key = hashlib.sha256(first_chunk.encode()).digest()[:12]
    flipped = first_chunk[:5] + ("A" if first_chunk[5] != "A" else "B") + first_chunk[6:]  # one byte changed
    store.conn.execute("UPDATE artifact_chunks SET data=? WHERE key=?", (zlib.compress(flipped.encode()), key))
    store.close()
    done = run_engine("verify", run, "--db", str(tmp_path / "e.db"))
    assert done.returncode == 1
    assert_no_traceback(done)
    said = " ".join(done.stderr.split())
    assert f"first bad event is seq {seq}: the artifact {digest} this event refers to" in said
    assert "do not match its digest" in said


def test_a_database_written_before_artifacts_opens_and_gains_their_tables(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    store = SQLiteEventStore(db)
    store.create_run("R", strategy="toy", task="toy")
    store.append("R", [NewEvent(event=Note(level="info", message="before", data={}), scope="run")], expected_seq=0)
    store.close()
    conn = sqlite3.connect(db)  # what schema 1 had: no artifact tables
    conn.executescript("DROP TABLE artifacts; DROP TABLE artifact_chunks; "
                       "UPDATE engine_meta SET value='1' WHERE key='schema';")
    conn.close()
    store = SQLiteEventStore(db)
    schema = store.conn.execute("SELECT value FROM engine_meta WHERE key='schema'").fetchone()[0]
    assert schema == str(SCHEMA_VERSION)
    long_prompt = "x = 1\n" * 400
    store.append("R", [NewEvent(event=AgentCallRequested(effect_id="a", agent_type="toy", prompt=long_prompt),
                                scope="toy")], expected_seq=1)
    assert [e.payload.get("prompt") for e in store.read("R")] == [None, long_prompt]
    assert store.verify_chain("R") is None
    store.close()


def test_replay_compares_a_recorded_reference_with_the_produced_string_by_digest() -> None:
    script = "print(1)\n" * 200
    ref = {"$artifact": digest_of(script), "bytes": len(script)}
    assert same_decision({"code": ref, "n": [1, ref]}, {"code": script, "n": [1, script]})
    assert not same_decision({"code": ref}, {"code": script + " "})
    assert not same_decision({"code": ref, "n": 1}, {"code": script})


@settings(max_examples=60, deadline=None)
@given(st.recursive(st.one_of(st.text(max_size=40), st.integers(), st.text(min_size=300).map(lambda t: t * 5)),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                               max_size=3), max_leaves=8))
def test_externalised_payloads_resolve_to_what_they_were(value: object) -> None:
    found: dict[str, str] = {}
    stored = externalise({"v": value}, found)
    assert all(len(t.encode()) > MIN_BYTES and digest_of(t) == d for d, t in found.items())
    assert resolved(stored, found) == {"v": value}
    assert "".join(chunks_of(next(iter(found.values()), ""))) == next(iter(found.values()), "")


def test_a_format_1_export_still_replays_and_imports(tmp_path: Path) -> None:
    """A pre-artifact export (the fixture, no end line) imports, and re-exported it is format 2."""
    store = SQLiteEventStore(tmp_path / "e.db")
    run = store.import_jsonl(io.StringIO(FIXTURE.read_text(encoding="utf-8")))
    out = io.StringIO()
    store.export_jsonl(run, out)
    end = json.loads(out.getvalue().splitlines()[-1])["export_end"]
    assert end["format"] == 2 and end["artifacts"] == 0  # imported rows keep their inline strings
    assert store.verify_chain(run) is None


def test_the_ui_reads_artifacts_whole_and_finds_the_chain_intact(tmp_path: Path) -> None:
    """The UI reads rows through its own read-only connection (engine/ui/source.py)."""
    from engine.ui.source import SQLiteSource
    from store.chain import envelopes_problem

    store, run, _ = _recorded_again(tmp_path / "e.db")
    source = SQLiteSource(tmp_path / "e.db")
    try:
        shown = source.read(run)
        assert shown == list(store.read(run))
        assert envelopes_problem(shown) is None
        assert envelopes_problem(source.read(run, from_seq=1)[:5]) is None
    finally:
        source.close()
        store.close()
