"""Disk full under the SQLite file (issue "Storage faults"): a real builtin run whose database
sits on a 400 KB file system stops with one named line (exit 1, no traceback, not the secondary
"cannot rollback" error that used to hide it); with more space, ``engine resume`` completes it
and its log matches an undisturbed run of the same arguments apart from times: the session's shared
iris run (``tests.support.shared_runs``), made once for every test that only reads such a run.

Only the database is on the small file system: the run's working directory (next to the database)
is a link to a roomy one, so evaluations never meet the full disk and the fault is the store's own.
Which way the space was limited (a tmpfs mount, or RLIMIT_FSIZE where mounting is not permitted) is
printed with ``-s`` and named in a failure.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.core.helpers import read_log
from tests.crash.harness import comparable_decisions, final_result
from tests.store_faults.tinyfs import tiny_fs
from tests.support.shared_runs import IRIS_QUICK_ARGS, IRIS_RUN_ID, shared_iris_quick_run

RUN = IRIS_RUN_ID
START = tuple(a for a in IRIS_QUICK_ARGS if a != "--json")


def _no_traceback(text: str) -> bool:
    return not re.search(r"^Traceback|cannot rollback", text, re.M)


@pytest.mark.slow
def test_disk_full_is_named_and_resume_completes_the_same_run(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    work = tmp_path / "work"
    (work / RUN).mkdir(parents=True)
    with tiny_fs(tmp_path / "tiny", 400) as fs:
        (fs.root / RUN).symlink_to(work / RUN, target_is_directory=True)
        db = fs.root / "e.db"
        full = fs.engine(*START, "--db", db)
        how = f"(space limited by {fs.mode})"
        print(f"disk full {how}: {full.stderr.strip().splitlines()[-1:]}")
        assert full.returncode == 1, f"{how} rc {full.returncode}: {full.stdout[-800:]} {full.stderr[-2000:]}"
        assert _no_traceback(full.stderr), f"{how}: {full.stderr[-2000:]}"
        last = full.stderr.strip().splitlines()[-1]
        assert last.startswith("error: ") and f"engine resume {RUN}" in last, f"{how}: {full.stderr[-1500:]}"
        assert ("disk full" in last or "file size limit" in last), f"{how}: {last}"
        fs.grow()
        resumed = fs.engine("resume", RUN, "--db", db)
        assert resumed.returncode == 0, f"{how}: {resumed.stdout[-800:]} {resumed.stderr[-2000:]}"
        assert _no_traceback(resumed.stderr), resumed.stderr[-2000:]
        log = read_log(db, RUN)
    assert log[-1].type == "RunCompleted"
    shared = shared_iris_quick_run(tmp_path_factory)
    reference, want = shared.db.parent, read_log(shared.db, RUN)
    assert [e.type for e in log if e.type == "DriverStarted"] == ["DriverStarted"] * 2  # stopped once, resumed once
    assert final_result(log, work) == final_result(want, reference)
    assert comparable_decisions(log, work) == comparable_decisions(want, reference)
