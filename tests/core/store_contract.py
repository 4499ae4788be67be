"""The event-store contract: tests every backend must pass (issue "Event-sourced core":
"a store test suite any backend passes"; ARCHITECTURE "A new storage backend → store/, passing
the same store test suite as SQLite").

Subclass :class:`EventStoreContract` in a ``test_*.py`` module and implement the hooks:

* ``store_opener(tmp_path)`` → a picklable zero-argument callable opening the backend at a place
  derived from ``tmp_path``; calling it twice opens two handles on the *same* store (it is also
  called in child processes);
* ``plant_lease(store, run_id, pid, host, expires_at)`` → write a lease row as some other driver
  would have left it (used to simulate dead and foreign holders);
* ``run_sql(store, statement, params)`` → run one SQL statement written with ``?`` placeholders
  on the store's own connection, as someone editing the database by hand would (tampering).
"""

from __future__ import annotations

import hashlib
import io
import json
import multiprocessing
import os
import socket
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, cast

import pytest

from events.base import GENESIS_HASH, Event, NewEvent
from events.core import AgentCallCompleted, AgentCallRequested, Note
from store.base import (
    ConcurrencyError,
    CorruptLog,
    DatabaseLocked,
    DuplicateResultError,
    EventStore,
    LeaseHeld,
    RunExists,
    RunNotFound,
    StoreError,
)
from store.run_ids import InvalidRunId


def note(i: int, scope: str = "run") -> NewEvent:
    return NewEvent(event=Note(level="info", message=f"note {i}", data={"i": i, "ü": "é✓"}), scope=scope)


def request(effect_id: str) -> NewEvent:
    return NewEvent(event=AgentCallRequested(effect_id=effect_id, agent_type="toy", prompt=f"do {effect_id}"),
                    scope="toy")


def result(effect_id: str, text: str = "ok", cause: int | None = None) -> NewEvent:
    return NewEvent(event=AgentCallCompleted(effect_id=effect_id, text=text, elapsed_s=1.5), scope="toy",
                    causation_seq=cause)


class _Unserialisable(Event):
    """An event whose payload cannot be produced: a 'bad event' in the middle of a batch."""

    type_name: ClassVar[str] = "ContractBadEvent"

    def payload(self) -> dict[str, Any]:
        raise ValueError("this event cannot be serialised")


def nonexistent_pid() -> int:
    """A pid no process has right now."""
    pid = 4_000_000
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
        except PermissionError:
            pass
        pid += 1


def _append_worker(opener: Callable[[], EventStore], run_id: str, tag: str, n: int) -> None:
    """Child process: append ``n`` events one by one, retrying on stale expected_seq."""
    store = opener()
    done = 0
    while done < n:
        head = store.last_seq(run_id)
        try:
            store.append(run_id, [NewEvent(event=Note(level="info", message=tag, data={"i": done}))],
                         expected_seq=head)
            done += 1
        except (ConcurrencyError, DatabaseLocked):
            continue
    store.close()


class EventStoreContract:
    """Every backend's tests. Hooks: ``store_opener`` and ``plant_lease`` (see the module doc)."""

    def store_opener(self, tmp_path: Path) -> Callable[[], EventStore]:
        raise NotImplementedError

    def plant_lease(self, store: EventStore, run_id: str, pid: int, host: str, expires_at: float) -> None:
        raise NotImplementedError

    def run_sql(self, store: EventStore, statement: str, params: tuple[Any, ...]) -> None:
        raise NotImplementedError

    def make_store(self, tmp_path: Path) -> EventStore:
        return self.store_opener(tmp_path)()

    @pytest.fixture
    def store(self, tmp_path: Path):
        s = self.make_store(tmp_path)
        yield s
        s.close()

    @pytest.fixture
    def run(self, store: EventStore) -> str:
        store.create_run("R1", strategy="toy", task="toy")
        return "R1"

    # --- append / read ------------------------------------------------------------------------

    def test_append_read_round_trip(self, store: EventStore, run: str) -> None:
        batch = [request("e/1"), result("e/1", "answer ✓", cause=1), note(3, scope="phase2/path-0")]
        written = store.append(run, batch, expected_seq=0)
        read = list(store.read(run))
        assert read == written
        assert [(e.type, e.scope, e.causation_seq) for e in read] == [
            ("AgentCallRequested", "toy", None), ("AgentCallCompleted", "toy", 1), ("Note", "phase2/path-0", None)]
        assert [e.event() for e in read] == [b.event for b in batch]
        assert list(store.read(run, from_seq=3)) == written[2:]
        assert store.last_seq(run) == 3 and store.get_run(run).last_seq == 3

    def test_seqs_gap_free_from_one(self, store: EventStore, run: str) -> None:
        head = 0
        for size in (1, 3, 1, 5, 2):
            envs = store.append(run, [note(head + i) for i in range(size)], expected_seq=head)
            head += size
            assert envs[-1].seq == head
        assert [e.seq for e in store.read(run)] == list(range(1, head + 1))

    def test_empty_append_is_a_no_op(self, store: EventStore, run: str) -> None:
        assert store.append(run, [], expected_seq=0) == []
        assert store.last_seq(run) == 0

    def test_append_is_atomic(self, store: EventStore, run: str) -> None:
        store.append(run, [note(1)], expected_seq=0)
        bad = NewEvent(event=_Unserialisable())
        with pytest.raises(ValueError):
            store.append(run, [note(2), note(3), bad], expected_seq=1)
        with pytest.raises(DuplicateResultError):
            store.append(run, [request("x"), result("x"), note(4), result("x", "again")], expected_seq=1)
        assert [e.seq for e in store.read(run)] == [1]
        assert store.last_seq(run) == 1
        # the store is still usable and the chain still continues from seq 1
        store.append(run, [note(5)], expected_seq=1)
        assert store.verify_chain(run) is None

    def test_stale_expected_seq(self, store: EventStore, run: str) -> None:
        store.append(run, [note(1), note(2)], expected_seq=0)
        for stale in (0, 1, 3):
            with pytest.raises(ConcurrencyError):
                store.append(run, [note(9)], expected_seq=stale)
        assert store.last_seq(run) == 2

    def test_duplicate_result_refused_across_batches(self, store: EventStore, run: str) -> None:
        store.append(run, [request("a"), result("a")], expected_seq=0)
        with pytest.raises(DuplicateResultError):
            store.append(run, [result("a", "second answer")], expected_seq=2)
        assert store.last_seq(run) == 2
        store.append(run, [result("b")], expected_seq=2)  # another effect is fine

    def test_same_effect_id_in_two_runs(self, store: EventStore, run: str) -> None:
        store.create_run("R2", strategy="toy", task="toy")
        store.append(run, [result("a")], expected_seq=0)
        store.append("R2", [result("a")], expected_seq=0)

    # --- hash chain ---------------------------------------------------------------------------

    def test_hash_chain_recomputable(self, store: EventStore, run: str) -> None:
        store.append(run, [request("e"), result("e", "ünïcode ✓ \"quoted\" \\ \n\t\u2028")], expected_seq=0)
        store.append(run, [note(3), note(4, scope='odd "scope"/ü\\\u0001'), note(5, scope="phase2/path-0")],
                     expected_seq=2)
        odd = NewEvent(event=Note(level="warn", message="nan and big ints", data={"x": float("nan"), "n": 2**70,
                                                                                   "f": 1e-300, "neg": -0.0}),
                       scope="run", causation_seq=4)
        store.append(run, [odd], expected_seq=5)
        prev = "0" * 64
        for env in store.read(run):
            fields = {"run_id": env.run_id, "seq": env.seq, "type": env.type, "version": env.version,
                      "scope": env.scope, "causation_seq": env.causation_seq, "recorded_at": env.recorded_at,
                      "payload": env.payload}
            text = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
            assert env.prev_hash == prev
            assert env.hash == hashlib.sha256(prev.encode() + text.encode("utf-8")).hexdigest()
            prev = env.hash
        assert prev != GENESIS_HASH
        assert store.verify_chain(run) is None

    def test_check_chain_reads_on_from_the_verified_head(self, store: EventStore, run: str) -> None:
        """check_chain (what opening a run costs) starts where the last intact check ended: an event
        rewritten after it is found, one rewritten before it is left to verify_chain's full read."""
        store.append(run, [note(i) for i in range(1, 6)], expected_seq=0)
        assert store.check_chain(run) is None  # verified up to seq 5
        store.append(run, [note(i) for i in range(6, 9)], expected_seq=5)
        self.run_sql(store, "UPDATE events SET recorded_at='2001-01-01T00:00:00+00:00' WHERE run_id=? AND seq=?",
                     (run, 7))
        problem = store.check_chain(run)
        assert problem is not None and problem.seq == 7 and "hash" in problem.reason
        assert store.check_chain(run) == problem  # a failed check moves the verified head nowhere
        self.run_sql(store, "UPDATE events SET recorded_at='2001-01-01T00:00:00+00:00' WHERE run_id=? AND seq=?",
                     (run, 3))
        assert store.verify_chain(run).seq == 3

    def test_check_chain_names_a_deleted_last_event(self, store: EventStore, run: str) -> None:
        store.append(run, [note(i) for i in range(1, 5)], expected_seq=0)
        assert store.check_chain(run) is None
        store.append(run, [note(5), note(6)], expected_seq=4)
        self.run_sql(store, "DELETE FROM events WHERE run_id=? AND seq=?", (run, 6))
        for problem in (store.check_chain(run), store.verify_chain(run)):
            assert problem is not None and problem.seq == 6
            assert "event 6, the run's last, is missing (deleted)" in problem.reason

    def test_check_chain_notices_the_verified_head_rewritten_or_gone(self, store: EventStore, run: str) -> None:
        store.append(run, [note(i) for i in range(1, 4)], expected_seq=0)
        assert store.check_chain(run) is None  # verified up to seq 3
        self.run_sql(store, "UPDATE events SET hash=? WHERE run_id=? AND seq=?", ("f" * 64, run, 3))
        problem = store.check_chain(run)
        assert problem is not None and problem.seq == 3 and "earlier check" in problem.reason
        self.run_sql(store, "DELETE FROM events WHERE run_id=? AND seq>=?", (run, 2))
        self.run_sql(store, "UPDATE runs SET head_seq=1 WHERE run_id=?", (run,))
        problem = store.check_chain(run)
        assert problem is not None and problem.seq == 3 and "missing" in problem.reason

    # --- runs ---------------------------------------------------------------------------------

    def test_create_run_twice(self, store: EventStore, run: str) -> None:
        with pytest.raises(RunExists):
            store.create_run(run, strategy="toy", task="toy")
        assert [r.run_id for r in store.list_runs()] == [run]

    def test_unknown_run(self, store: EventStore, run: str) -> None:
        calls = [lambda: store.get_run("nope"), lambda: store.last_seq("nope"), lambda: list(store.read("nope")),
                 lambda: store.append("nope", [note(1)], expected_seq=0), lambda: store.verify_chain("nope"),
                 lambda: store.acquire_lease("nope"), lambda: store.export_jsonl("nope", io.StringIO())]
        for call in calls:
            with pytest.raises(RunNotFound, match="nope"):
                call()

    def test_status(self, store: EventStore, run: str) -> None:
        store.set_status(run, "stopped")
        assert store.get_run(run).status == "stopped"

    # --- leases -------------------------------------------------------------------------------

    def test_lease_held_by_live_holder(self, store: EventStore, run: str) -> None:
        token = store.acquire_lease(run, ttl_s=30)
        with pytest.raises(LeaseHeld) as info:
            store.acquire_lease(run, ttl_s=30)
        assert info.value.pid == os.getpid() and info.value.host == socket.gethostname()
        assert str(os.getpid()) in str(info.value) and socket.gethostname() in str(info.value)
        store.renew_lease(run, token, ttl_s=30)
        store.release_lease(run, token)
        store.release_lease(run, store.acquire_lease(run))

    def test_expired_lease_taken_over(self, store: EventStore, run: str) -> None:
        old = store.acquire_lease(run, ttl_s=0.05)
        time.sleep(0.1)
        new = store.acquire_lease(run, ttl_s=30)
        assert new != old
        with pytest.raises(StoreError):
            store.renew_lease(run, old)  # the old holder learns it lost the lease
        store.renew_lease(run, new)

    def test_dead_holder_taken_over(self, store: EventStore, run: str) -> None:
        self.plant_lease(store, run, nonexistent_pid(), socket.gethostname(), time.time() + 3600)
        store.acquire_lease(run)

    def test_live_foreign_holder_is_respected(self, store: EventStore, run: str) -> None:
        """A lease from another host cannot be checked by pid: it holds until it expires."""
        self.plant_lease(store, run, nonexistent_pid(), "elsewhere.example", time.time() + 3600)
        with pytest.raises(LeaseHeld, match="elsewhere.example"):
            store.acquire_lease(run)
        self.plant_lease(store, run, 1, socket.gethostname(), time.time() + 3600)  # pid 1 is alive
        with pytest.raises(LeaseHeld, match="process 1 "):
            store.acquire_lease(run)

    def test_lease_of_a_killed_process_taken_over(self, tmp_path: Path) -> None:
        """A real holder process: its lease holds while it lives and is taken over once it died
        without releasing it (what a SIGKILLed driver leaves behind)."""
        opener = self.store_opener(tmp_path)
        store = opener()
        store.create_run("R1", strategy="toy", task="toy")
        ctx = multiprocessing.get_context("spawn")
        parent_end, child_end = ctx.Pipe()
        child = ctx.Process(target=_lease_and_die, args=(opener, "R1", child_end))
        child.start()
        assert parent_end.poll(60), "the child never took the lease"
        assert parent_end.recv() == "held"
        with pytest.raises(LeaseHeld) as info:
            store.acquire_lease("R1")
        assert info.value.pid == child.pid
        parent_end.send("die")
        child.join(60)
        assert child.exitcode == 0
        store.acquire_lease("R1")
        store.close()

    # --- export / import ----------------------------------------------------------------------

    def _exported(self, store: EventStore, run: str) -> str:
        store.append(run, [request("e"), result("e", "ä\n\"quoted\"")], expected_seq=0)
        store.append(run, [note(3, scope="phase1")], expected_seq=2)
        buf = io.StringIO()
        assert store.export_jsonl(run, buf) == 3
        return buf.getvalue()

    def test_export_import_round_trip(self, store: EventStore, run: str, tmp_path: Path) -> None:
        text = self._exported(store, run)
        other = self.make_store(tmp_path / "other")
        try:
            assert other.import_jsonl(io.StringIO(text)) == run
            assert list(other.read(run)) == list(store.read(run))
            assert other.verify_chain(run) is None
            again = io.StringIO()
            other.export_jsonl(run, again)
            assert again.getvalue() == text
            with pytest.raises(RunExists):
                other.import_jsonl(io.StringIO(text))
        finally:
            other.close()

    def test_import_of_altered_export_refused(self, store: EventStore, run: str, tmp_path: Path) -> None:
        text = self._exported(store, run)
        lines = text.splitlines()
        record = json.loads(lines[1])
        record["payload"]["text"] = "a forged answer"
        altered = "\n".join([lines[0], json.dumps(record), lines[2]]) + "\n"
        dropped = "\n".join([lines[0], lines[2]]) + "\n"
        other = self.make_store(tmp_path / "other")
        try:
            for bad in (altered, dropped, "not json\n", ""):
                with pytest.raises(CorruptLog):
                    other.import_jsonl(io.StringIO(bad))
            with pytest.raises(RunNotFound):
                other.get_run(run)
        finally:
            other.close()

    def test_export_ends_with_its_end_line(self, store: EventStore, run: str) -> None:
        lines = self._exported(store, run).splitlines()
        last = json.loads(lines[2])
        assert json.loads(lines[-1]) == {"export_end": {"format": 2, "run_id": run, "events": 3, "head_seq": 3,
                                                        "head_hash": last["hash"], "artifacts": 0}}

    def test_export_cut_short_is_refused_unless_partial_is_allowed(self, store: EventStore, run: str,
                                                                    tmp_path: Path) -> None:
        lines = self._exported(store, run).splitlines()
        other = self.make_store(tmp_path / "other")
        try:
            for cut in (lines[:-1], lines[:-2], lines[:1]):  # the end line, then events too, dropped
                with pytest.raises(CorruptLog, match="no end line .* cut short.*--allow-partial"):
                    other.import_jsonl(io.StringIO("\n".join(cut) + "\n"))
            with pytest.raises(RunNotFound):
                other.get_run(run)
            assert other.import_jsonl(io.StringIO("\n".join(lines[:-2]) + "\n"), allow_partial=True) == run
            assert other.get_run(run).status == "partial" and other.last_seq(run) == 2
            assert other.verify_chain(run) is None
        finally:
            other.close()

    def test_end_line_that_disagrees_or_is_newer_is_refused(self, store: EventStore, run: str,
                                                             tmp_path: Path) -> None:
        lines = self._exported(store, run).splitlines()
        end = json.loads(lines[-1])
        fewer = dict(end["export_end"], events=2, head_seq=2)
        newer = dict(end["export_end"], format=99)
        cases = {"events are missing": [*lines[:2], json.dumps({"export_end": fewer})],
                 "says 3 events": [*lines[:2], lines[-1]],
                 "format 99": [*lines[:3], json.dumps({"export_end": newer})],
                 "text after the export's end line": [*lines, lines[0]]}
        other = self.make_store(tmp_path / "other")
        try:
            for message, bad in cases.items():
                with pytest.raises(CorruptLog, match=message):
                    other.import_jsonl(io.StringIO("\n".join(bad) + "\n"))
            with pytest.raises(RunNotFound):
                other.get_run(run)
        finally:
            other.close()

    def test_import_refuses_an_unsafe_run_id(self, store: EventStore, tmp_path: Path) -> None:
        """A file names its own run: the one run-id rule applies to it as to `engine start`."""
        store.create_run("../../etc/x", strategy="toy", task="toy")  # a store below the CLI takes any key
        store.append("../../etc/x", [note(1)], expected_seq=0)
        buf = io.StringIO()
        store.export_jsonl("../../etc/x", buf)
        other = self.make_store(tmp_path / "other")
        try:
            with pytest.raises(InvalidRunId, match="path separator"):
                other.import_jsonl(io.StringIO(buf.getvalue()), allow_partial=True)
            assert other.list_runs() == []
        finally:
            other.close()

    def test_import_into_same_store_refused(self, store: EventStore, run: str) -> None:
        text = self._exported(store, run)
        with pytest.raises(RunExists):
            store.import_jsonl(io.StringIO(text))
        assert store.last_seq(run) == 3

    # --- artifacts (store/artifacts.py) --------------------------------------------------------

    def _with_artifacts(self, store: EventStore, run: str) -> None:
        """Two prompts quoting one long script, its answer, and a Note whose data nests it."""
        store.append(run, [NewEvent(event=AgentCallRequested(effect_id="a", agent_type="toy", prompt=PROMPT_A),
                                    scope="toy"),
                           NewEvent(event=AgentCallRequested(effect_id="b", agent_type="toy", prompt=PROMPT_B),
                                    scope="toy")], expected_seq=0)
        store.append(run, [result("a", SCRIPT, cause=1),
                           NewEvent(event=Note(level="info", message="n", data={"k": [SCRIPT, "short"]}), scope="run")],
                     expected_seq=2)

    def _count(self, store: EventStore, table: str) -> int:
        return sum(1 for _ in _select(store, f"SELECT digest FROM {table}"))

    def test_long_strings_are_stored_once_and_read_whole(self, store: EventStore, run: str) -> None:
        self._with_artifacts(store, run)
        log = list(store.read(run))
        assert [e.payload.get("prompt") for e in log[:2]] == [PROMPT_A, PROMPT_B]
        assert log[2].payload["text"] == SCRIPT and log[3].payload["data"] == {"k": [SCRIPT, "short"]}
        stored = [row[0] for row in _select(store, "SELECT payload FROM events ORDER BY seq")]
        assert all(SCRIPT not in p and len(p) < 500 for p in stored)
        assert sum(p.count('"$artifact"') for p in stored) == 4
        assert self._count(store, "artifacts") == 3  # two prompts and the script, each once
        assert store.verify_chain(run) is None and store.check_chain(run) is None

    def test_verify_names_a_changed_artifact_and_the_event_referring_to_it(self, store: EventStore, run: str) -> None:
        self._with_artifacts(store, run)
        key = hashlib.sha256(SCRIPT.encode()).digest()[:12]  # SCRIPT is one line: one chunk
        altered = SCRIPT[:100] + "Y" + SCRIPT[101:]
        self.run_sql(store, "UPDATE artifact_chunks SET data=? WHERE key=?", (zlib.compress(altered.encode()), key))
        problem = store.verify_chain(run)
        digest = "sha256:" + hashlib.sha256(SCRIPT.encode()).hexdigest()
        assert problem is not None and problem.seq == 3
        assert digest in problem.reason and "do not match its digest" in problem.reason
        with pytest.raises(CorruptLog, match=f"seq 3: the artifact {digest}"):
            list(store.read(run))
        self.run_sql(store, "UPDATE artifact_chunks SET data=? WHERE key=?", (b"\x00not zlib", key))
        problem = store.verify_chain(run)
        assert problem is not None and problem.seq == 3 and "damaged chunk" in problem.reason

    def test_export_import_round_trips_artifacts(self, store: EventStore, run: str, tmp_path: Path) -> None:
        self._with_artifacts(store, run)
        buf = io.StringIO()
        store.export_jsonl(run, buf)
        lines = buf.getvalue().splitlines()
        assert sum(line.startswith('{"artifact"') for line in lines) == 3
        assert json.loads(lines[-1])["export_end"]["artifacts"] == 3
        other = self.make_store(tmp_path / "other")
        try:
            assert other.import_jsonl(io.StringIO(buf.getvalue())) == run
            assert list(other.read(run)) == list(store.read(run))
            assert other.verify_chain(run) is None
            again = io.StringIO()
            other.export_jsonl(run, again)
            assert again.getvalue() == buf.getvalue()
        finally:
            other.close()

    def test_import_refuses_an_export_whose_artifact_was_changed_or_dropped(self, store: EventStore, run: str,
                                                                           tmp_path: Path) -> None:
        self._with_artifacts(store, run)
        buf = io.StringIO()
        store.export_jsonl(run, buf)
        text = buf.getvalue()
        lines = text.splitlines()
        changed = text.replace(SCRIPT[:200], SCRIPT[:199] + "Y", 1)
        digest = "sha256:" + hashlib.sha256(SCRIPT.encode()).hexdigest()
        dropped = "\n".join(line for line in lines if not line.startswith('{"artifact":{"digest":"' + digest))
        other = self.make_store(tmp_path / "other")
        try:
            with pytest.raises(CorruptLog, match="does not match its digest"):
                other.import_jsonl(io.StringIO(changed))
            with pytest.raises(CorruptLog, match=f"event 3 refers to the artifact {digest}, which the file"):
                other.import_jsonl(io.StringIO(dropped + "\n"))
            with pytest.raises(RunNotFound):
                other.get_run(run)
        finally:
            other.close()

    def test_a_pre_artifact_export_imports_as_it_was(self, store: EventStore, tmp_path: Path) -> None:
        """A recorded run exported before artifacts and before end lines (long scripts inline in the
        payloads; its last event ends the run) imports as it was written."""
        path = Path(__file__).parents[1] / "replays" / "mle-star-wine-builtin.jsonl"
        text = path.read_text(encoding="utf-8")
        assert "export_end" not in text and '"$artifact"' not in text and len(text) > 500_000
        run = store.import_jsonl(io.StringIO(text))
        recorded = [json.loads(line) for line in text.splitlines()]
        assert [e.model_dump(mode="json") for e in store.read(run)] == recorded
        assert store.verify_chain(run) is None

    # --- several processes --------------------------------------------------------------------

    def test_concurrent_appends_from_two_processes(self, tmp_path: Path) -> None:
        opener = self.store_opener(tmp_path)
        store = opener()
        store.create_run("R1", strategy="toy", task="toy")
        n = 40
        ctx = multiprocessing.get_context("spawn")
        procs = [ctx.Process(target=_append_worker, args=(opener, "R1", tag, n)) for tag in ("A", "B")]
        for p in procs:
            p.start()
        for p in procs:
            p.join(120)
            assert p.exitcode == 0
        log = list(store.read("R1"))
        assert [e.seq for e in log] == list(range(1, 2 * n + 1))
        for tag in ("A", "B"):
            assert [e.payload["data"]["i"] for e in log if e.payload["message"] == tag] == list(range(n))
        assert store.verify_chain("R1") is None
        store.close()


SCRIPT = "import numpy as np  # " + "".join(f"{i:04d}" for i in range(600))  # one long line: one chunk
PROMPT_A = "Improve this script:\n" + SCRIPT + "\nKeep the metric."
PROMPT_B = "Debug this script:\n" + SCRIPT + "\nIt failed."


def _select(store: EventStore, query: str) -> list[tuple[Any, ...]]:
    """Rows of a query on the store's own connection (SQLite and PostgreSQL handles both have ``conn``)."""
    conn: Any = cast(Any, store).conn
    return list(conn.execute(query).fetchall())


def _lease_and_die(opener: Callable[[], EventStore], run_id: str, conn: Any) -> None:
    """Child process: take the lease, say so, and on request exit without releasing it."""
    store = opener()
    store.acquire_lease(run_id, ttl_s=3600)
    conn.send("held")
    conn.recv()
    os._exit(0)
