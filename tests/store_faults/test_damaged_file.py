"""A damaged database file (issue "Storage faults"): 4 KB of zeros written into the middle of a
database holding three runs. ``engine verify`` names the runs that read whole and the one that does
not (from which seq), exit 1, no traceback; ``engine runs``/``status``/``export`` of the damaged run
print one named line; the intact runs are exported and imported into a new database (the salvage
path the README describes), where they verify whole.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.core.helpers import run_engine
from tests.store_faults.helpers import database_of_runs, one_error_line, zero_page_inside


@pytest.fixture
def damaged(tmp_path: Path) -> tuple[Path, list[str], str]:
    db = tmp_path / "e.db"
    runs = database_of_runs(db)
    zero_page_inside(db, runs[1])
    return db, runs, runs[1]


def test_verify_lists_intact_and_damaged_runs(damaged: tuple[Path, list[str], str]) -> None:
    db, runs, bad = damaged
    for args in (("verify",), ("verify", bad)):
        proc = run_engine(*args, "--db", db)
        assert proc.returncode == 1, proc.stderr[-2000:]
        assert not re.search(r"^Traceback", proc.stderr, re.M), proc.stderr[-2000:]
        assert "DAMAGED" in proc.stderr and "database file is damaged" in proc.stderr
        for run in runs:
            line = next(x for x in proc.stderr.splitlines() if x.strip().split()[1:2] == [f"{run}:"])
            if run == bad:
                seq = int(re.search(r"unreadable from seq (\d+)", line).group(1))
                assert 1 < seq, line  # the events before the zeroed page still read
            else:
                assert line.split()[0] == "intact" and "read whole" in line, line
        assert f"runs that read whole: {runs[0]}, {runs[2]}" in proc.stderr


def test_verify_of_an_intact_run_in_a_damaged_file_passes(damaged: tuple[Path, list[str], str]) -> None:
    db, runs, _ = damaged
    proc = run_engine("verify", runs[0], "--db", db)
    assert proc.returncode == 0 and f"OK: run {runs[0]}" in proc.stdout, proc.stderr[-1500:]


@pytest.mark.parametrize("command", [("runs",), ("status", "BAD"), ("export", "BAD", "-o", "OUT")])
def test_reading_the_damaged_run_is_one_named_line(damaged: tuple[Path, list[str], str], tmp_path: Path,
                                                  command: tuple[str, ...]) -> None:
    db, _, bad = damaged
    out = tmp_path / "bad.jsonl"
    args = [bad if a == "BAD" else str(out) if a == "OUT" else a for a in command]
    line = one_error_line(run_engine(*args, "--db", db))
    assert "is damaged (database disk image is malformed)" in line and "`engine verify`" in line, line
    assert f"reading run {bad}" in line, line
    assert not out.exists(), "a run cut short by the damage must not be left as an export"


def test_intact_runs_are_salvaged_into_a_new_database(damaged: tuple[Path, list[str], str], tmp_path: Path) -> None:
    db, runs, bad = damaged
    fresh = tmp_path / "salvaged.db"
    for run in (r for r in runs if r != bad):
        export = tmp_path / f"{run}.jsonl"
        assert run_engine("export", run, "-o", export, "--db", db).returncode == 0
        assert run_engine("import", export, "--db", fresh).returncode == 0
    proc = run_engine("verify", "--db", fresh)
    assert proc.returncode == 0, proc.stderr[-1500:]
    assert [line.split()[2] for line in proc.stdout.splitlines()] == [f"{runs[0]}:", f"{runs[2]}:"]
