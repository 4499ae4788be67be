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
