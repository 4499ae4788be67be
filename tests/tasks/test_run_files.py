"""Where a run's files go (docs/tasks.md, "Where a run's files go": next to the database file) and
`engine runs` printing every run id whole in an 80-column terminal."""

from __future__ import annotations

from tests.core.helpers import engine_env, run_engine, start_toy

LONG_ID = "run-20261129-071500-wine-two-targets-seed-3"


def test_run_files_go_next_to_the_database_and_runs_prints_the_id_whole(tmp_path):
    db = tmp_path / "elsewhere" / "my.db"
    started = run_engine(*start_toy(db, LONG_ID))
    assert started.returncode == 0, started.stderr
    assert (tmp_path / "elsewhere" / LONG_ID).is_dir()
    assert not (tmp_path / "engine-runs").exists()
    listed = run_engine("runs", "--db", db, env=engine_env(COLUMNS="80"))
    assert listed.returncode == 0, listed.stderr
    assert LONG_ID in listed.stdout, listed.stdout
    assert all(len(line) <= 80 for line in listed.stdout.splitlines())
    # The other columns shown are whole too (a narrow terminal drops strategy, phase and events
    # rather than cutting every column to three letters); a wide one shows them all.
    words = listed.stdout.split()
    assert "completed" in words and "…" not in listed.stdout, listed.stdout
    assert "strategy" not in listed.stdout
    wide = run_engine("runs", "--db", db, env=engine_env(COLUMNS="200"))
    assert wide.returncode == 0 and "strategy" in wide.stdout and "tests.toy.strategy:main" in wide.stdout, wide.stdout


def test_a_run_folder_that_would_be_the_task_folder_is_refused_before_anything_exists(tmp_path):
    """`engine start --task wine --run-id wine --db ./e.db` in the task's parent folder would make the
    task folder the run's folder: the agents' inputs, staged from the task folder into the run's,
    would copy themselves without end. It is refused by name, before a database or run exists."""
    from tests.tasks.folders import regression

    task = regression(tmp_path / "wine")
    before = sorted(p.name for p in task.iterdir())
    for run_id, db in (("wine", tmp_path / "e.db"), ("inner", task / "e.db")):
        proc = run_engine("start", "--task", task, "--agent", "builtin", "--preset", "quick", "--run-id", run_id,
                          "--db", db, env=engine_env())
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "would overlap the task folder" in proc.stderr and "Traceback" not in proc.stderr
        assert not db.exists()
    assert sorted(p.name for p in task.iterdir()) == before
