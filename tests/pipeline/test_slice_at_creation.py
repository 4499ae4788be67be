"""A run's slice is drawn once, when the run is created, and read back by the driver's evaluation
executor (docs/final-choice-slice.md): real task files, a real SQLite store."""

from __future__ import annotations

from pathlib import Path

from engine.run import lifecycle
from engine.run.held_back import SLICE_DIR, held_back_for, recorded_slice
from events.config import PipelineConfig
from replay.state import fold
from store.sqlite import SQLiteEventStore

TASK = "wage-education"  # 2,100 training rows


def task_of(store: SQLiteEventStore, run_id: str):
    state = fold(store.read(run_id))
    return lifecycle.task_of_run(Path(state.run_dir), Path(state.task_dir))


def _create(tmp_path: Path, run_id: str, seed: int, task: str = TASK, **config) -> SQLiteEventStore:
    db = tmp_path / "runs" / "e.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    store = SQLiteEventStore(db)
    lifecycle.create_run(store, db=db, task_spec=task, strategy="mle-star", backend_name="builtin",
                         config=PipelineConfig(**{"hidden_slice": True, **config}), seed=seed, run_id=run_id)
    return store


def test_a_new_run_records_its_slice_and_the_executor_finds_it(tmp_path: Path) -> None:
    store = _create(tmp_path, "A", seed=5)
    drawn = recorded_slice(store, "A")
    assert drawn is not None and (drawn.rows, drawn.of_rows) == (210, 2100)
    run_dir = tmp_path / "runs" / "A"
    assert Path(drawn.view_dir) == (run_dir / SLICE_DIR / "public").resolve()
    assert Path(drawn.answers).is_file() and Path(drawn.view_dir, "train.csv").is_file()
    held_back = held_back_for(store, "A", lambda: task_of(store, "A"))
    assert held_back is not None and held_back.slice.answers == Path(drawn.answers)
    assert held_back.task.answers is not None  # grading reads the task's own rules and files
    # the run's task data is still the task's own: only the evaluations see the view
    assert fold(store.read("A")).task_dir != drawn.view_dir


def test_the_slice_follows_the_seed(tmp_path: Path) -> None:
    store = _create(tmp_path, "A", seed=5)
    _create(tmp_path, "B", seed=5)
    _create(tmp_path, "C", seed=6)
    digests = {run: recorded_slice(store, run).ids_digest for run in ("A", "B", "C")}
    assert digests["A"] == digests["B"] != digests["C"]


def test_a_small_task_or_the_setting_off_holds_nothing_back_and_says_why(tmp_path: Path) -> None:
    assert PipelineConfig().hidden_slice is False  # off until measured (docs/decisions/0033)
    store = _create(tmp_path, "small", seed=0, task="iris")
    small = recorded_slice(store, "small")
    assert small is not None and small.rows == 0 and "2,000" in small.reason
    _create(tmp_path, "off", seed=0, hidden_slice=False)
    off = recorded_slice(store, "off")
    assert off is not None and off.rows == 0 and "hidden_slice is off" in off.reason
    assert not (tmp_path / "runs" / "off" / SLICE_DIR).exists()
    assert held_back_for(store, "off", lambda: task_of(store, "off")) is None


def test_a_start_that_died_before_its_first_event_leaves_a_slice_that_is_drawn_again(tmp_path: Path) -> None:
    stale = tmp_path / "runs" / "A" / SLICE_DIR
    stale.mkdir(parents=True)
    (stale / "left-over").write_text("from a start that died")
    store = _create(tmp_path, "A", seed=5)
    assert not (stale / "left-over").exists() and recorded_slice(store, "A").rows == 210
