"""A start-up that spent the run's limit is refused before the run exists (exit 2, nothing recorded).

``engine start``'s clock starts with its process, so the task's check, its copy and the backend's
check count against ``--time-limit``. When they leave less than finalization's floor, a
run begun then could only fail without a submission; it is refused with the limit that would do.
The start-up's length is set on the run's own clock (where it started), never measured.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from engine.config.presets import build_config
from engine.run.lifecycle import time_left_problems
from events.domain import PipelineConfig
from handlers.timebudget import FINALIZATION_FLOOR_S, shortest_workable_limit_s
from store.sqlite import SQLiteEventStore
from tests.pipeline.test_cli_inputs import engine_in_process


def _config(limit: int) -> PipelineConfig:
    return build_config(preset="time", config_file=None, overrides=[], extra={"time_limit_seconds": limit})


def test_the_time_left_after_the_start_up_is_checked_against_finalizations_floor() -> None:
    cfg = _config(120)
    shortest = shortest_workable_limit_s(cfg)
    assert time_left_problems(cfg, 0.0) == []
    assert time_left_problems(cfg, 120.0 - FINALIZATION_FLOOR_S) == []  # the floor left: a run still tries
    said = time_left_problems(cfg, 120.0 - FINALIZATION_FLOOR_S + 0.5)
    assert len(said) == 1 and f"give --time-limit {101 + shortest} or more" in said[0], said
    assert "too short even for finalization" in said[0], said
    late = time_left_problems(cfg, 559.8)  # past the limit: nothing left, and the limit that would do
    assert "took 560 s of --time-limit 120 s" in late[0] and "the 0 s left" in late[0]
    assert f"give --time-limit {560 + shortest} or more" in late[0], late


def test_engine_start_refuses_a_run_whose_start_up_left_too_little(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path, task_dir: Path) -> None:
    from engine.run import lifecycle

    startup_s = 105.0  # of a 120 s limit: less than finalization's floor is left
    monkeypatch.setattr(lifecycle, "command_clock_started", lambda: time.monotonic() - startup_s)
    db = tmp_path / "runs" / "e.db"
    done = engine_in_process("start", "--task", str(task_dir), "--agent", "builtin", "--preset", "time",
                             "--time-limit", "120", "--run-id", "late", "--db", str(db))
    assert done.returncode == 2, (done.stdout, done.stderr)
    flat = " ".join(done.stderr.split())
    assert "the start-up before the run took" in flat and "too short even for finalization" in flat, flat
    assert "Traceback" not in done.stderr
    assert [r.run_id for r in SQLiteEventStore(db).list_runs()] == []  # no run, no event
    assert not (tmp_path / "runs" / "late").exists()  # the task's copy made for it is gone
