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
from tests.store_faults.helpers import PAGE, database_of_runs, one_error_line, zero_page_inside


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
        # The runs are listed in the store's order (when each was created), not the order of import.
        whole = re.search(r"runs that read whole: (.*?)\. ", proc.stderr).group(1).split(", ")
        assert sorted(whole) == sorted([runs[0], runs[2]]), proc.stderr


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
    assert sorted(line.split()[2] for line in proc.stdout.splitlines()) == sorted([f"{runs[0]}:", f"{runs[2]}:"])


def test_a_page_damaged_anywhere_is_reported_never_a_traceback(tmp_path: Path) -> None:
    """The fault-injection sweep: 4 KB of zeros over pages drawn at random (seeded) from the whole
    file, the header page and the schema pages included. Whatever the page held, `engine verify`
    either finds every run whole (exit 0: the page was free or held nothing verify reads) or
    names the damage (exit 1) — never a traceback — and every run it can still list is named."""
    import random
    import shutil

    pristine = tmp_path / "pristine.db"
    runs = database_of_runs(pristine)
    pages = pristine.stat().st_size // PAGE
    rng = random.Random(30)
    drawn = sorted({0, 1, *rng.sample(range(2, pages), 8)})
    outcomes = {}
    for page in drawn:
        db = tmp_path / f"page-{page}.db"
        shutil.copyfile(pristine, db)
        with open(db, "r+b") as fh:
            fh.seek(page * PAGE)
            fh.write(b"\0" * PAGE)
        proc = run_engine("verify", "--db", db)
        text = proc.stdout + proc.stderr
        assert not re.search(r"^Traceback", proc.stderr, re.M), f"page {page}: {proc.stderr[-2000:]}"
        # 2: the header itself is gone, and no file that is not SQLite can be told from one whose
        # header was wiped, so the line says both (the wrong --db, or restore from a copy).
        assert proc.returncode in (0, 1, 2), f"page {page}: rc {proc.returncode} {text[-1500:]}"
        if proc.returncode == 0:
            assert all(f"{run}:" in proc.stdout for run in runs), f"page {page}: {text[-1500:]}"
        else:
            # named as damage (pages SQLite cannot read) or as a broken chain at a seq (bytes SQLite
            # still reads, e.g. zeros inside a payload, which the hash chain catches)
            assert re.search(r"damaged|TAMPERED: run \S+: first bad event is seq \d+|^error: ", text, re.M), (
                f"page {page}: {text[-1500:]}")
        outcomes[page] = proc.returncode
        if proc.returncode == 2:
            assert page == 0 and "header is damaged: restore it from a copy" in proc.stderr, text[-1500:]
    assert outcomes[0] == 2, "the header page zeroed must be named, not read as an empty database"
    assert 1 in outcomes.values(), outcomes
