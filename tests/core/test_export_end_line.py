"""Exports are complete or refused (issue 61, "the log and the run directory" 3): `engine export`
ends the file with an end line (event count, head hash, format); `engine import` refuses a file cut
short unless `--allow-partial` (then the run is imported and named partial); exports written before
end lines are named as such, imported when their last event ends the run; `engine replay --against`
reads both. Real CLI, real SQLite (the store contract runs the same rules on PostgreSQL)."""

from __future__ import annotations

from pathlib import Path

from store.sqlite import SQLiteEventStore
from tests.core.helpers import REPO, assert_no_traceback, run_engine

LEGACY = REPO / "tests" / "replays" / "mle-star-iris-builtin.jsonl"  # written before end lines


def _cut(source: Path, dest: Path, drop: int) -> Path:
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    dest.write_text("".join(lines[:-drop]), encoding="utf-8")
    return dest


def _status(db: Path, run_id: str) -> str:
    store = SQLiteEventStore(db, create=False)
    try:
        return store.get_run(run_id).status
    finally:
        store.close()


def test_a_truncated_export_is_refused_then_imported_as_partial(toy_run, tmp_path: Path) -> None:
    export = tmp_path / "r.jsonl"
    assert run_engine("export", "R", "-o", export, "--db", toy_run.db).returncode == 0
    assert '"export_end"' in export.read_text().splitlines()[-1]
    cut = _cut(export, tmp_path / "cut.jsonl", drop=10)
    fresh = tmp_path / "fresh.db"
    refused = run_engine("import", cut, "--db", fresh)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    message = " ".join(refused.stderr.split())
    assert "no end line" in message and "cut short" in message and "--allow-partial" in message, message
    assert_no_traceback(refused)
    assert not fresh.exists(), "a refused import leaves no database behind"
    partial = run_engine("import", cut, "--allow-partial", "--db", fresh)
    assert partial.returncode == 0, partial.stderr
    assert f"as PARTIAL ({len(toy_run.log) - 9} events" in partial.stdout
    assert _status(fresh, "R") == "partial"


def test_a_complete_export_round_trips(toy_run, tmp_path: Path) -> None:
    export = tmp_path / "r.jsonl"
    assert run_engine("export", "R", "-o", export, "--db", toy_run.db).returncode == 0
    fresh = tmp_path / "fresh.db"
    proc = run_engine("import", export, "--db", fresh)
    assert proc.returncode == 0, proc.stderr
    assert f"imported run R ({len(toy_run.log)} events)" in proc.stdout
    assert _status(fresh, "R") == "completed"
    again = tmp_path / "again.jsonl"
    assert run_engine("export", "R", "-o", again, "--db", fresh).returncode == 0
    assert again.read_bytes() == export.read_bytes()


def test_an_export_from_before_end_lines_is_named_as_such(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh.db"
    proc = run_engine("import", LEGACY, "--db", fresh)
    assert proc.returncode == 0, proc.stderr
    assert "an export from before end lines, complete: its last event ends the run" in " ".join(proc.stdout.split())
    cut = _cut(LEGACY, tmp_path / "cut.jsonl", drop=5)
    refused = run_engine("import", cut, "--db", tmp_path / "other.db")
    assert refused.returncode == 2 and "no end line" in refused.stderr, refused.stderr
    assert_no_traceback(refused)
    assert run_engine("import", cut, "--allow-partial", "--db", tmp_path / "other.db").returncode == 0


def test_replay_against_reads_both_and_refuses_a_disagreeing_end_line(toy_run, tmp_path: Path) -> None:
    export = tmp_path / "r.jsonl"
    assert run_engine("export", "R", "-o", export, "--db", toy_run.db).returncode == 0
    for path in (export, _cut(export, tmp_path / "no-end.jsonl", drop=1)):
        proc = run_engine("replay", "R", "--against", path)
        assert proc.returncode == 0 and "every decision matches" in proc.stdout, proc.stderr
    lines = export.read_text().splitlines(keepends=True)
    shortened = tmp_path / "shortened.jsonl"
    shortened.write_text("".join(lines[:-3] + lines[-1:]))  # two events dropped, the end line kept
    proc = run_engine("replay", "R", "--against", shortened)
    assert proc.returncode == 2 and "events are missing" in " ".join(proc.stderr.split()), proc.stderr
    assert_no_traceback(proc)
